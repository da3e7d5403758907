from django import template

from annotation.submissions import TEXT_LIMITS
from search_proxy.webaddress import is_web_address

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


@register.filter
def web_address(url) -> bool:
    """Whether `url` may become a link (http or https with a host)."""
    return is_web_address(url)


@register.simple_tag
def text_limit(name: str) -> int:
    """The `maxlength` of a hand-written field: its entry in the one table of text limits."""
    return TEXT_LIMITS[name]
