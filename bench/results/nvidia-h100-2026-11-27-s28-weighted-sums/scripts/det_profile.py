"""hector.bench.profile with torch.use_deterministic_algorithms(True)
(warn_only), so that the generated ops take their deterministic paths
(hp.hector_deterministic): which kernels a deterministic step spends its
time in."""
import sys

import torch

torch.use_deterministic_algorithms(True, warn_only=True)
from hector.bench.profile import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
