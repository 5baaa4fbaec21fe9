"""Minimal SVG line plots (no plotting dependency): a run's timeline, latency vs load."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

W, H, PAD = 640, 360, 50


def line_svg(
    title: str, x_label: str, series: Mapping[str, tuple[Sequence[float], Sequence[float]]], y_label: str
) -> str:
    xs = [x for xs_, _ in series.values() for x in xs_]
    ys = [y for _, ys_ in series.values() for y in ys_]
    if not xs:
        xs, ys = [0.0, 1.0], [0.0, 1.0]
    x0, x1 = min(xs), max(xs) or 1.0
    y0, y1 = 0.0, max(ys) or 1.0
    x1 = x1 if x1 > x0 else x0 + 1.0

    def sx(x: float) -> float:
        return PAD + (x - x0) / (x1 - x0) * (W - 2 * PAD)

    def sy(y: float) -> float:
        return H - PAD - (y - y0) / (y1 - y0) * (H - 2 * PAD)

    colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>',
           f'<line x1="{PAD}" y1="{H - PAD}" x2="{W - PAD}" y2="{H - PAD}" stroke="black"/>',
           f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{H - PAD}" stroke="black"/>',
           f'<text x="{W / 2}" y="{H - 10}" text-anchor="middle">{x_label} ({x0:.3g} – {x1:.3g})</text>',
           f'<text x="12" y="{H / 2}" transform="rotate(-90 12 {H / 2})" text-anchor="middle">{y_label} '
           f'(0 – {y1:.3g})</text>']  # fmt: skip
    for i, (name, (sx_, sy_)) in enumerate(series.items()):
        pts = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in zip(sx_, sy_, strict=True))
        c = colours[i % len(colours)]
        out.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.5" points="{pts}"/>')
        out.append(f'<text x="{W - PAD - 150}" y="{PAD + 15 * (i + 1)}" fill="{c}">{name}</text>')
    out.append("</svg>")
    return "\n".join(out)


def write(path: Path, svg: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(svg)
    return str(path)
