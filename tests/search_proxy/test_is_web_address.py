"""One answer to "is this a web address" for links, sources, intake and indexing."""

import pytest

from search_proxy.webaddress import is_web_address


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://www.bbc.co.uk/news/1", True),
        ("HTTP://example.org", True),
        ("  https://example.org/a  ", True),
        ("javascript:alert(1)", False),
        ("JavaScript://example.org/%0aalert(1)", False),
        ("ftp://example.org/file", False),
        ("data:text/html,hi", False),
        ("https://", False),
        ("metadata", False),
        ("example.org/page", False),
        ("", False),
        (None, False),
        ("https://exa mple.org", False),
    ],
)
def test_only_http_and_https_addresses_with_a_host_are_web_addresses(url, expected):
    assert is_web_address(url) is expected


def test_the_released_datasets_addresses_without_a_scheme_count_when_asked():
    assert is_web_address("example.org/page", scheme_optional=True)
    assert not is_web_address("Metadata", scheme_optional=True)
    assert not is_web_address("javascript:alert(document.cookie)", scheme_optional=True)
