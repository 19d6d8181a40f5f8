"""hector.bench.throughput with torch.use_deterministic_algorithms(True)
(warn_only: a baseline op without a deterministic kernel warns instead of
failing), so that the generated ops take their deterministic paths
(hp.hector_deterministic)."""
import sys

import torch

torch.use_deterministic_algorithms(True, warn_only=True)
from hector.bench.throughput import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
