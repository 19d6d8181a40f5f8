"""Runs RGAT-PyG's inference program (hector-cr, no grad) on one synthetic
dataset a few times: the process session 29 call g profiles with Nsight
Compute (the softmax traversal, inference_trav_3).

Usage: python3 softmax_case.py DATASET [RUNS]
"""
import sys

import torch

from hector.bench.cases import prepared_cases


class Args:
    def __init__(self, dataset):
        self.datasets = [dataset]
        self.models = ["rgat"]
        self.systems = ["hector-cr"]
        self.dim = 64
        self.heads = 1
        self.scale = 1.0


def main():
    dataset = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    torch.backends.cuda.matmul.allow_tf32 = True
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    for _, _, _, _, prepared in prepared_cases(Args(dataset), device):
        with torch.no_grad():
            for _ in range(runs):
                prepared.forward()
        if device.type == "cuda":
            torch.cuda.synchronize()


if __name__ == "__main__":
    main()
