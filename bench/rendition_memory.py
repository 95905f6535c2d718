"""Decode memory of renditions: the peak RSS growth of one `catalog.imaging.render` per format,
each in a fresh process, against the estimate `catalog.imaging.render_cost` reserves for it.

The images are the costliest the default limits let in: 8000x8000 (64 MP, the pixel limit),
one colour so that every body stays far below the 25 MB cap. Each child process imports the
module, renders a small JPEG (so libvips' own start-up is in the baseline), then renders the
image once; the growth is its peak RSS after minus before. Pure libvips: no Django, no
database.

Run: .venv/bin/python bench/rendition_memory.py [side]   (default 8000)
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MIB = 1024 * 1024


def images(side: int) -> dict[str, Callable[[], bytes]]:
    import pyvips

    def picture(bands: int, fmt: str = "uchar") -> pyvips.Image:
        # Gradients: every pixel differs from its neighbours (no palette, no one-colour
        # shortcut in a decoder), yet every body stays far below the 25 MB cap.
        x = pyvips.Image.xyz(side, side)[0]
        y = pyvips.Image.xyz(side, side)[1]
        planes = [(x * 255 / side), (y * 255 / side), ((x + y) * 127 / side), x * 0 + 255]
        image = planes[0].bandjoin(planes[1 : min(bands, 4)]) if bands > 1 else planes[0]
        if fmt == "ushort":
            return (image * 257).cast("ushort")
        return image.cast("uchar")

    rgb = picture(3).copy(interpretation="srgb")
    rgba = picture(4).copy(interpretation="srgb")
    gray = picture(1).copy(interpretation="b-w")
    rgba16 = picture(4, "ushort").copy(interpretation="rgb16")
    cmyk = picture(4).copy(interpretation="cmyk")
    return {
        "baseline JPEG 4:2:0": lambda: rgb.jpegsave_buffer(Q=50),
        "baseline JPEG 4:4:4": lambda: rgb.jpegsave_buffer(Q=50, subsample_mode="off"),
        "progressive JPEG 4:2:0": lambda: rgb.jpegsave_buffer(Q=50, interlace=True),
        "progressive JPEG 4:4:4": lambda: rgb.jpegsave_buffer(
            Q=50, interlace=True, subsample_mode="off"
        ),
        "CMYK JPEG": lambda: cmyk.jpegsave_buffer(Q=50),
        "progressive CMYK JPEG": lambda: cmyk.jpegsave_buffer(Q=50, interlace=True),
        "PNG RGB": lambda: rgb.pngsave_buffer(compression=6, filter="sub"),
        "PNG RGBA": lambda: rgba.pngsave_buffer(compression=6, filter="sub"),
        "PNG 16-bit RGBA": lambda: rgba16.pngsave_buffer(compression=6, filter="sub", bitdepth=16),
        "PNG gray": lambda: gray.pngsave_buffer(compression=6, filter="sub"),
        "interlaced PNG RGB": lambda: rgb.pngsave_buffer(
            compression=6, filter="sub", interlace=True
        ),
        "interlaced PNG 16-bit RGBA": lambda: rgba16.pngsave_buffer(
            compression=6, filter="sub", bitdepth=16, interlace=True
        ),
        "lossy WebP": lambda: rgb.webpsave_buffer(Q=50, effort=0),
        "lossless WebP": lambda: rgb.webpsave_buffer(lossless=True, effort=0),
        "lossless WebP RGBA": lambda: rgba.webpsave_buffer(lossless=True, effort=0),
        "GIF": lambda: rgb.gifsave_buffer(effort=1),
    }


def child(path: str) -> None:
    import pyvips

    from catalog.imaging import RenderError, render, render_cost

    small = Path(path).with_suffix(".small").read_bytes()
    render(small)
    data = Path(path).read_bytes()
    before = _status_kib("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) starts again from here
    try:
        estimate = render_cost(pyvips.Image.new_from_buffer(data, "", access="sequential"), data)
    except RenderError as exc:
        estimate = -1
        print(exc.reason, file=sys.stderr)
    outcome = "rendered"
    try:
        render(data)
    except RenderError as exc:
        outcome = exc.reason
    after = _status_kib("VmHWM")
    print(json.dumps({"growth": (after - before) * 1024, "estimate": estimate, "outcome": outcome}))


def _status_kib(field: str) -> int:
    # Not ru_maxrss: a process started by fork and exec keeps the forked copy's maximum,
    # which here would be the parent's, that generated the 64 MP images.
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def main() -> None:
    side = int(sys.argv[1]) if len(sys.argv) > 1 else 8000
    import pyvips

    from catalog.imaging import RENDER_THREADS

    print(
        f"render() peak RSS growth, {side}x{side}, one process per image; libvips "
        f"{pyvips.version(0)}.{pyvips.version(1)}.{pyvips.version(2)}, Python "
        f"{platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs, "
        f"libvips threads per render: {RENDER_THREADS}"
    )
    print(f"{'image':30} {'bytes':>9} {'estimate MiB':>13} {'measured MiB':>13}  outcome")
    small = pyvips.Image.black(300, 300, bands=3).jpegsave_buffer()
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in images(side).items():
            data = make()
            path = Path(tmp) / "image"
            path.write_bytes(data)
            path.with_suffix(".small").write_bytes(small)
            done = subprocess.run(  # noqa: S603 - this script, fixed arguments
                [sys.executable, __file__, "--child", str(path)],
                capture_output=True,
                text=True,
                check=True,
                cwd=ROOT,
            )
            result = json.loads(done.stdout.strip().splitlines()[-1])
            estimate = result["estimate"]
            shown = f"{estimate / MIB:13.0f}" if estimate >= 0 else f"{'refused':>13}"
            print(
                f"{name:30} {len(data):9d} {shown} {result['growth'] / MIB:13.0f}  "
                f"{result['outcome'][:70]}"
            )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2])
    else:
        main()
