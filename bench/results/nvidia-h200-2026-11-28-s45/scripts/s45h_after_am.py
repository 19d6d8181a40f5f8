"""Session 45, call h: mag's RGCN step (`hector`, back to back, five
bursts of 25) in a process that ran am's step first and freed it:
  A  prepared on mag's problem as the harness makes it after am;
  B  prepared again on a copy of x (new x, new module, new graph arrays);
  C  A's step again, after B.
"""
import gc
import json

import torch

from hector import datasets as hds
from hector.bench import systems as S
from hector.bench.problem import make_problem
from hector.bench.runner import _step, matmul_tf32
from hector.bench.throughput import time_steps


def bursts(label, step, dev):
    ms = [round(time_steps(step, dev, 25, 2), 4) for _ in range(5)]
    print(json.dumps({"phase": label, "ms": ms}), flush=True)


def problem(ds, dev):
    return make_problem(ds, "rgcn", hds.synthetic(ds, device=dev), 64, 1, dev)


def main():
    dev = torch.device("cuda")
    with matmul_tf32(True):
        am = problem("am", dev)
        step = _step(S.SYSTEMS["hector"].prepare(am), am, "inference")
        bursts("am first", step, dev)
        del step, am
        gc.collect()
        torch.cuda.empty_cache()
        mag = problem("mag", dev)
        step_a = _step(S.SYSTEMS["hector"].prepare(mag), mag, "inference")
        bursts("A mag after am", step_a, dev)
        mag.x = mag.x.clone()
        step_b = _step(S.SYSTEMS["hector"].prepare(mag), mag, "inference")
        bursts("B mag, new x, module and arrays", step_b, dev)
        bursts("C mag, A again", step_a, dev)


if __name__ == "__main__":
    main()
