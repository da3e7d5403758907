"""Server-rendered SVG charts for the managers' dashboard (no JavaScript, prints as is).

Each function takes plain figures and returns escaped SVG markup; every mark carries a
<title> so hovering shows the number, and each chart has a table beside it on the page.
"""

from __future__ import annotations

from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

from annotation.phases import PHASES

PHASE_COLOURS = {1: "#4c78a8", 2: "#f58518", 3: "#54a24b", 4: "#e45756", 5: "#b279a2"}
WIDTH, HEIGHT, LEFT, BOTTOM, TOP = 640, 220, 40, 30, 10


def _safe(value):
    # Numbers keep their type so that format specs such as {:.1f} apply; text is escaped.
    return value if isinstance(value, int | float) else conditional_escape(value)


def format_html(template: str, *args, **kwargs) -> SafeString:
    """Django's format_html, except that numbers are formatted, not escaped to text."""
    return mark_safe(  # every argument is escaped by _safe
        template.format(*map(_safe, args), **{k: _safe(v) for k, v in kwargs.items()})
    )


def format_html_join(sep: str, template: str, rows) -> SafeString:
    return mark_safe(sep.join(format_html(template, *row) for row in rows))


def _frame(title: str, body: SafeString, peak: float, width: int = WIDTH) -> SafeString:
    axis = format_html(
        '<line x1="{l}" y1="{t}" x2="{l}" y2="{b}" class="axis"/>'
        '<line x1="{l}" y1="{b}" x2="{r}" y2="{b}" class="axis"/>'
        '<text x="{lx}" y="{ty}" class="tick" text-anchor="end">{peak}</text>'
        '<text x="{lx}" y="{b}" class="tick" text-anchor="end">0</text>',
        l=LEFT,
        t=TOP,
        b=HEIGHT - BOTTOM,
        r=width - 5,
        lx=LEFT - 4,
        ty=TOP + 8,
        peak=_short(peak),
    )
    return format_html(
        '<svg class="chart" viewBox="0 0 {w} {h}" role="img" aria-label="{t}" '
        'xmlns="http://www.w3.org/2000/svg"><title>{t}</title>{a}{b}</svg>',
        w=width,
        h=HEIGHT,
        t=title,
        a=axis,
        b=body,
    )


def _short(value: float) -> str:
    return f"{value:g}" if value < 1000 else f"{value / 1000:.1f}k"


def _legend(phases: tuple[int, ...], y: int) -> SafeString:
    return format_html_join(
        "",
        '<rect x="{}" y="{}" width="10" height="10" fill="{}"/>'
        '<text x="{}" y="{}" class="tick">P{}</text>',
        (
            (LEFT + i * 50, y, PHASE_COLOURS[p], LEFT + i * 50 + 13, y + 9, p)
            for i, p in enumerate(phases)
        ),
    )


def stacked_days(days: list[dict], prefix: str, title: str) -> SafeString:
    """One stacked bar per day, a segment per phase (e.g. tasks handed in)."""
    totals = [sum(day[f"{prefix}{p}"] for p in PHASES) for day in days]
    peak = max([1, *totals])
    plot_h = HEIGHT - BOTTOM - TOP - 14
    step = (WIDTH - LEFT - 10) / max(1, len(days))
    bar = max(1.0, step * 0.8)
    marks = []
    for i, day in enumerate(days):
        y = HEIGHT - BOTTOM
        for p in PHASES:
            n = day[f"{prefix}{p}"]
            if not n:
                continue
            h = n / peak * plot_h
            y -= h
            marks.append(
                format_html(
                    '<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}">'
                    "<title>{}: P{} {}</title></rect>",
                    LEFT + 2 + i * step,
                    y,
                    bar,
                    h,
                    PHASE_COLOURS[p],
                    day["day"],
                    p,
                    n,
                )
            )
    if days:
        marks.append(
            format_html(
                '<text x="{}" y="{}" class="tick">{}</text>'
                '<text x="{}" y="{}" class="tick" text-anchor="end">{}</text>',
                LEFT,
                HEIGHT - BOTTOM + 12,
                days[0]["day"],
                WIDTH - 5,
                HEIGHT - BOTTOM + 12,
                days[-1]["day"],
            )
        )
    marks.append(_legend(PHASES, HEIGHT - 12))
    return _frame(title, mark_safe("".join(marks)), peak)  # the parts are escaped


def lines_by_phase(days: list[dict], prefix: str, title: str) -> SafeString:
    """One line per phase over the days (e.g. the queue at each day's end)."""
    peak = max([1, *(day[f"{prefix}{p}"] for day in days for p in PHASES)])
    plot_h = HEIGHT - BOTTOM - TOP - 14
    step = (WIDTH - LEFT - 10) / max(1, len(days) - 1)
    marks = []
    for p in PHASES:
        points = " ".join(
            f"{LEFT + i * step:.1f},{HEIGHT - BOTTOM - day[f'{prefix}{p}'] / peak * plot_h:.1f}"
            for i, day in enumerate(days)
        )
        last = days[-1][f"{prefix}{p}"] if days else 0
        marks.append(
            format_html(
                '<polyline points="{}" fill="none" stroke="{}" stroke-width="2">'
                "<title>P{}: {} at the end</title></polyline>",
                points,
                PHASE_COLOURS[p],
                p,
                last,
            )
        )
    marks.append(_legend(PHASES, HEIGHT - 12))
    return _frame(title, mark_safe("".join(marks)), peak)  # the parts are escaped


KAPPA_TICKS = (-1.0, -0.5, 0.0, 0.2, 0.4, 0.6, 0.8, 1.0)


def kappa_bars(rows: list[dict], title: str) -> SafeString:
    """Horizontal bars from -1 to 1 with the bootstrap interval as a whisker, the value
    printed at the end of each bar, and ticks where kappa is usually read (0.2 steps)."""
    width, label_w, row_h = WIDTH, 200, 24
    height = TOP + row_h * len(rows) + 30
    # The right margin leaves room for the printed value.
    x0, span = label_w + (width - label_w - 50) / 2, (width - label_w - 50) / 2

    def x(v: float) -> float:
        return x0 + max(-1.0, min(1.0, v)) * span

    bottom = height - 22
    marks = [
        format_html(
            '<line x1="{:.1f}" y1="{}" x2="{:.1f}" y2="{}" class="{}"/>'
            '<text x="{:.1f}" y="{}" class="tick" text-anchor="middle">{}</text>',
            x(tick),
            TOP,
            x(tick),
            bottom,
            "axis" if tick == 0 else "gridline",
            x(tick),
            height - 8,
            f"{tick:g}",
        )
        for tick in KAPPA_TICKS
    ]
    for i, row in enumerate(rows):
        y = TOP + i * row_h
        marks.append(format_html('<text x="0" y="{}" class="tick">{}</text>', y + 15, row["label"]))
        value = row["value"]
        if value is None:
            marks.append(
                format_html('<text x="{:.1f}" y="{}" class="tick">no data</text>', x0 + 4, y + 15)
            )
            continue
        left, right = sorted((x0, x(value)))
        marks.append(
            format_html(
                '<rect x="{:.1f}" y="{}" width="{:.1f}" height="14" fill="{}">'
                "<title>{}: {:.3f}</title></rect>",
                left,
                y + 4,
                max(1.0, right - left),
                "#4c78a8" if value >= 0 else "#e45756",
                row["label"],
                value,
            )
        )
        interval = row.get("interval")
        if interval:
            low, high = interval
            marks.append(
                format_html(
                    '<line x1="{:.1f}" y1="{}" x2="{:.1f}" y2="{}" class="whisker">'
                    "<title>95% interval {:.3f} to {:.3f}</title></line>",
                    x(low),
                    y + 11,
                    x(high),
                    y + 11,
                    low,
                    high,
                )
            )
        # The value in print, past the bar and its whisker, so it is read without hovering.
        end = max(x(value), x(interval[1]) if interval else x(value), x0)
        marks.append(
            format_html(
                '<text x="{:.1f}" y="{}" class="value">{:.2f}</text>', end + 4, y + 15, value
            )
        )
    return format_html(
        '<svg class="chart" viewBox="0 0 {} {}" role="img" aria-label="{}" '
        'xmlns="http://www.w3.org/2000/svg"><title>{}</title>{}</svg>',
        width,
        height,
        title,
        title,
        mark_safe("".join(marks)),  # the parts are escaped
    )
