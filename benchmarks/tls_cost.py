"""What mutual TLS (``security.ssl.internal.enabled``) costs the data plane: an interleaved A/B
of the remote exchange of ``exchange_throughput`` (a spawned producer TaskManager sending to
this process over loopback), plain TCP against TLS.

The two variants alternate, ``--pairs`` times, so that whatever else the machine does falls on
both alike; it prints each pair and the medians of records/s and of CPU µs per record of the
busier process (the figure two otherwise idle cores would show as the rate). Loopback has no
network latency and unlimited bandwidth, so this is the CPU cost of TLS (AES-GCM sealing and
opening, one more copy of every byte on each side), the worst case relative to a real network.

Run: ``.venv/bin/python -m benchmarks.tls_cost [--records N] [--pairs P]
[--shape small|kib]``
"""

from __future__ import annotations

import argparse
import statistics

from benchmarks.exchange_throughput import Result, flintlock_run

TLS = {"security.ssl.internal.enabled": "true"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--shape", choices=("small", "kib"), default="kib",
                        help="(int, int) records or (int, 1 KiB bytes) records")
    args = parser.parse_args()
    shape = "(int, int)" if args.shape == "small" else "(int, 1 KiB bytes)"
    runs: dict[str, list[Result]] = {"plain": [], "tls": []}
    print(f"{args.records:,} x {shape}, {args.pairs} interleaved pairs")
    print("| pair | plain records/s | TLS records/s | TLS/plain |")
    print("|---:|---:|---:|---:|")
    for pair in range(args.pairs):
        plain = flintlock_run(shape, args.records, {})
        sealed = flintlock_run(shape, args.records, dict(TLS))
        runs["plain"].append(plain)
        runs["tls"].append(sealed)
        print(f"| {pair + 1} | {args.records / plain.seconds / 1e6:.3f} M "
              f"| {args.records / sealed.seconds / 1e6:.3f} M "
              f"| {plain.seconds / sealed.seconds:.0%} |")
    rate = {k: statistics.median(args.records / r.seconds for r in v) for k, v in runs.items()}
    cpu = {k: statistics.median(r.bottleneck_cpu / args.records * 1e6 for r in v)
           for k, v in runs.items()}
    mb = {k: statistics.median(r.wire_bytes / r.seconds / 1e6 for r in v)
          for k, v in runs.items()}
    print()
    print("| variant | median records/s | median MB/s | median CPU µs/record (busier side) |")
    print("|---|---:|---:|---:|")
    for name in ("plain", "tls"):
        print(f"| {name} | {rate[name] / 1e6:.3f} M | {mb[name]:.0f} | {cpu[name]:.2f} |")
    print(f"\nTLS keeps {rate['tls'] / rate['plain']:.0%} of the plain rate "
          f"({cpu['tls'] / cpu['plain']:.2f}x the CPU per record on the busier side)")


if __name__ == "__main__":
    main()
