from django import template

register = template.Library()


@register.filter
def dictget(mapping, key):
    """mapping[key] in a template, or "" when absent (keys may be ints or strings)."""
    if not mapping:
        return ""
    try:
        return mapping.get(key, mapping.get(str(key), ""))
    except AttributeError:
        return ""
