"""What the CRC-32 check of the weights' records costs: two torch2onnx CLIs
(built before and after it, or any two) export the same archives, runs
alternating, and the medians are printed side by side (wall seconds, peak RSS).

    /usr/bin/python3 bench/crc_cost.py --before OLD/torch2onnx --after build/torch2onnx \
        [--models vgg16,big_2.5GiB] [--repeat 5]
"""
import argparse
import os
import statistics
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402
import harness  # noqa: E402  (bench puts tests/ on the path)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--before", required=True)
    p.add_argument("--after", required=True)
    p.add_argument("--models", default="vgg16,big_2.5GiB")
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    print("| model | weights MB | before s | after s | before peak RSS MB | after peak RSS MB |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in a.models.split(","):
        with tempfile.TemporaryDirectory(dir=os.environ.get("T2O_BENCH_DIR")) as work:
            module, args = bench.MODELS[name]()
            pt, args_pt = os.path.join(work, "m.pt"), os.path.join(work, "args.pt")
            harness.trace(module, args, pt)
            torch.save(args, args_pt)
            weights_mb = sum(t.numel() * t.element_size() for t in module.state_dict().values()) / 1e6
            del module
            times = {"before": [], "after": []}
            rss = {"before": [], "after": []}
            env = {**os.environ, "T2O_TIMING": "1"}
            for _ in range(a.repeat):
                for label in ("before", "after"):
                    out = os.path.join(work, f"{label}.onnx")
                    cmd = [getattr(a, label), "export", pt, "-o", out, "--args", args_pt]
                    wall, peak, _ = bench.run_measured(cmd, env=env)
                    times[label].append(wall)
                    rss[label].append(peak)
                    for f in (out, out + ".data"):
                        if os.path.exists(f):
                            os.remove(f)
            med = {k: statistics.median(v) for k, v in times.items()}
            peak = {k: statistics.median(v) for k, v in rss.items()}
            print(f"| {name} | {weights_mb:.1f} | {med['before']:.2f} | {med['after']:.2f} | "
                  f"{peak['before']:.0f} | {peak['after']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
