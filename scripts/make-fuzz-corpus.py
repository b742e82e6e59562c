#!/usr/bin/env python3
"""Makes the seed corpus of the fuzz targets (fuzz/corpus/<target>/; fuzz/README.md).

    scripts/make-fuzz-corpus.py GPULB_BINARY [OUT_DIR]    (default OUT_DIR: fuzz/corpus)

Seeds, the same for every target:
  real-*.gpulb      small traces recorded with the CPU backend, and one shipped GPU trace
  payload-*.bin     their decompressed payloads (an input without the magic is a payload: the
                    targets wrap it in a valid zstd frame, see fuzz/fuzz_input.hpp)
  bad-*.gpulb/.bin  damaged files: truncated, flipped header bytes, crafted huge counts
Reproducers of fixed findings (crash-*, repro-*) are added by hand and kept; this script never
deletes files. Needs the `zstd` command. Deterministic except for the recorded traces' timings.
"""
import os
import struct
import subprocess
import sys
import tempfile

TARGETS = ("decode", "export", "model")
RUNS = [  # name, gpulb run arguments (CPU backend, small)
    ("patterns-cpu", ["patterns", "--backend", "cpu", "--param", "blocks=64"]),
    ("uts-ws-cpu", ["uts", "--backend", "cpu", "--param", "tree=custom", "--param", "d=4", "--policy", "work-stealing"]),
    ("patterns-tq-cpu", ["patterns", "--backend", "cpu", "--policy", "task-queue", "--param", "blocks=48", "--param", "work=100"]),
    ("nqueens-sl-cpu", ["nqueens", "--backend", "cpu", "--policy", "static-list", "--param", "n=5", "--param", "cutoff=2"]),
    ("connect4-bq-cpu", ["connect4", "--backend", "cpu", "--policy", "blocking-queue", "--param", "lookahead=2"]),
    ("patterns-hw-cpu", ["patterns", "--backend", "cpu", "--policy", "hardware", "--param", "blocks=40", "--param", "pattern=P4"]),
]
SHIPPED = "scenarios/traces/connect4-4-static-list-h200.gpulb"  # the smallest GPU trace (SMs, host lanes)
HEADER = 24  # magic, version u32, flags u32, payload size u64


def payload_of(trace: bytes) -> bytes:
    with tempfile.NamedTemporaryFile(suffix=".zst") as f:
        f.write(trace[HEADER:])
        f.flush()
        return subprocess.run(["zstd", "-dc", f.name], check=True, capture_output=True).stdout


def varints(b: bytes, at: int, n: int):
    """n LEB128 integers from b[at:]: (their bytes, the offset after them)."""
    start = at
    for _ in range(n):
        while b[at] & 0x80:
            at += 1
        at += 1
    return b[start:at], at


def shrink_payload(payload: bytes, worker_tracks: int, events: int) -> bytes:
    """The payload with its host tracks and first `worker_tracks` others, each cut to `events` events."""
    meta_len = struct.unpack_from("<I", payload, 0)[0]
    at = 4 + meta_len
    count = struct.unpack_from("<I", payload, at)[0]
    at += 4
    kept, workers = [], 0
    for _ in range(count):
        role = payload[at]
        name_len = struct.unpack_from("<I", payload, at + 13)[0]
        head_end = at + 17 + name_len + 8
        n = struct.unpack_from("<Q", payload, head_end)[0]
        cols = head_end + 8
        kinds, flags, aux = payload[cols:cols + n], payload[cols + n:cols + 2 * n], payload[cols + 2 * n:cols + 4 * n]
        times, after = varints(payload, cols + 4 * n, n)
        args, after = varints(payload, after, n)
        if role == 1 or workers < worker_tracks:
            workers += role != 1
            m = min(n, events)
            kept.append(payload[at:head_end] + struct.pack("<Q", m) + kinds[:m] + flags[:m] + aux[:2 * m] +
                        varints(times, 0, m)[0] + varints(args, 0, m)[0])
        at = after
    assert at == len(payload)
    return payload[:4 + meta_len] + struct.pack("<I", len(kept)) + b"".join(kept)


def damaged(good: bytes, payload: bytes) -> dict:
    """Damaged variants of one small good trace and its payload."""
    out = {}
    out["bad-truncated-header.gpulb"] = good[:16]
    out["bad-truncated-half.gpulb"] = good[: len(good) // 2]
    out["bad-truncated-last-byte.gpulb"] = good[:-1]
    out["bad-trailing-byte.gpulb"] = good + b"\0"
    out["bad-magic.gpulb"] = b"GPULBTRX" + good[8:]
    out["bad-version-0.gpulb"] = good[:8] + struct.pack("<I", 0) + good[12:]
    out["bad-version-2.gpulb"] = good[:8] + struct.pack("<I", 2) + good[12:]
    out["bad-flags.gpulb"] = good[:12] + struct.pack("<I", 0xFFFFFFFF) + good[16:]
    out["bad-huge-payload-size.gpulb"] = good[:16] + struct.pack("<Q", 1 << 63) + good[24:]
    flipped = bytearray(good)
    flipped[HEADER + 5] ^= 0x40  # inside the zstd frame header: the content size claim
    out["bad-frame-size-claim.gpulb"] = bytes(flipped)
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0x01  # the frame checksum catches it
    out["bad-flipped-body.gpulb"] = bytes(flipped)
    # Payload-level damage (the targets wrap these in a valid frame).
    meta_len = struct.unpack_from("<I", payload, 0)[0]
    tracks_at = 4 + meta_len
    out["bad-payload-meta-huge.bin"] = struct.pack("<I", 0xFFFFFFFF) + payload[4:]
    out["bad-payload-meta-not-json.bin"] = struct.pack("<I", 3) + b"{[}" + payload[tracks_at:]
    out["bad-payload-meta-deep.bin"] = (lambda m: struct.pack("<I", len(m)) + m)(b"[" * 5000 + b"]" * 5000) + b"\0" * 4
    out["bad-payload-tracks-huge.bin"] = payload[:tracks_at] + struct.pack("<I", 0xFFFFFFFF) + payload[tracks_at + 4:]
    # The first track's event count (after role u8, device, worker, sm u32, name, dropped u64).
    at = tracks_at + 4 + 1 + 12
    name_len = struct.unpack_from("<I", payload, at)[0]
    count_at = at + 4 + name_len + 8
    out["bad-payload-events-huge.bin"] = payload[:count_at] + struct.pack("<Q", (1 << 64) - 1) + payload[count_at + 8:]
    out["bad-payload-device-missing.bin"] = payload[:tracks_at + 5] + struct.pack("<I", 7) + payload[tracks_at + 9:]
    out["bad-payload-empty.bin"] = b""
    return out


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    gpulb = sys.argv[1]
    out_dir = sys.argv[2] if len(sys.argv) > 2 else "fuzz/corpus"
    seeds = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in RUNS:
            path = os.path.join(tmp, name + ".gpulb")
            subprocess.run([gpulb, "run", *args, "-o", path], check=True, capture_output=True)
            seeds["real-" + name + ".gpulb"] = open(path, "rb").read()
    seeds["real-" + os.path.basename(SHIPPED)] = open(SHIPPED, "rb").read()
    for name in list(seeds):
        payload = payload_of(seeds[name])
        if len(payload) > 16384:  # the shipped GPU trace: its host lanes and a few SM lanes
            payload = shrink_payload(payload, 6, 40)
        seeds["payload-" + name[len("real-"):].replace(".gpulb", ".bin")] = payload
    seeds.update(damaged(seeds["real-patterns-hw-cpu.gpulb"], seeds["payload-patterns-hw-cpu.bin"]))
    for target in TARGETS:
        d = os.path.join(out_dir, target)
        os.makedirs(d, exist_ok=True)
        for name, data in seeds.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
    total = sum(len(v) for v in seeds.values()) * len(TARGETS)
    print(f"make-fuzz-corpus: {len(seeds)} seeds x {len(TARGETS)} targets, {total} bytes in {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
