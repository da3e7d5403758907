"""How the dashboard prints a figure: three decimals, and a dash where there is none."""

from django import template

register = template.Library()


@register.filter
def figure(value) -> str:
    if value is None or value == "":
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


@register.filter
def heading(name: str) -> str:
    """A CSV column name as a table heading: words that can wrap ("left out rated once")."""
    return str(name).replace("_", " ")


# Short names for the confusion matrices' axes, so five columns fit a phone; the page
# spells each out in a legend and in the cell's title.
VERDICT_ABBREVIATIONS = {
    "Supported": "S",
    "Refuted": "R",
    "Not Enough Evidence": "NEI",
    "Conflicting Evidence/Cherrypicking": "C/C",
    "Claim too vague": "Vague",
}
HEAT_STEPS = 5


@register.filter
def abbreviated(label: str) -> str:
    return VERDICT_ABBREVIATIONS.get(label, label)


@register.filter
def heat(count: int, peak: int) -> str:
    """The shade class of a heat-map cell: heat-0 for none, up to heat-5 for the peak."""
    if not count or not peak:
        return "heat-0"
    return f"heat-{max(1, round(HEAT_STEPS * count / peak))}"
