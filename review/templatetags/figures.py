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
