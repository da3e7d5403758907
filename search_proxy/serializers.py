"""Shapes of the search API: the query a client sends and the marked results it gets back."""

from __future__ import annotations

from django.core.validators import RegexValidator
from django.utils import timezone
from rest_framework import serializers

from search_proxy.backends import MAX_PAGE
from search_proxy.service import MAX_QUERY_LENGTH


class WebAddressField(serializers.URLField):
    """An http or https address, as the page viewer and webhooks take."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("max_length", 2048)
        super().__init__(**kwargs)
        # Also a pattern in the schema, so clients know only web addresses are taken.
        self.validators.append(
            RegexValidator(
                r"^[Hh][Tt][Tt][Pp][Ss]?://[^/?#]", message="Give an http or https address."
            )
        )


class SearchQuerySerializer(serializers.Serializer):
    # Spaces alone are no query: the pattern says so in the schema too.
    # Something besides spaces, and no NUL (DRF refuses it). Python and JavaScript disagree
    # on a few control characters being spaces, so those count as spaces here.
    q = serializers.RegexField(
        r"^[^\x00]*[^\s\x00\x1c-\x1f\x85][^\x00]*$",
        max_length=MAX_QUERY_LENGTH,
        error_messages={"invalid": "Type something to search for."},
        help_text="What to search for (not only spaces).",
    )
    before = serializers.DateField(
        required=False,
        help_text="Only pages published before this day (YYYY-MM-DD). Defaults to the task's "
        "claim date, and can never be later than it; without a task, to today.",
    )
    country = serializers.RegexField(
        r"^[A-Za-z]{2}$",
        required=False,
        help_text="Two-letter country code; defaults to the claim's location.",
    )
    page = serializers.IntegerField(min_value=1, max_value=MAX_PAGE, default=1)
    task = serializers.IntegerField(
        required=False, help_text="The caller's own Phase 2 or Phase 4 task."
    )

    def validate(self, data: dict) -> dict:
        if "task" not in data and "before" not in data:
            # A search for no claim (managers, researchers) still sees no page of the future.
            data["before"] = timezone.localdate()
        return data


class SearchResultSerializer(serializers.Serializer):
    rank = serializers.IntegerField(help_text="The backend's own rank, 1-based across pages.")
    title = serializers.CharField()
    url = serializers.CharField()
    snippet = serializers.CharField()
    published = serializers.DateField(allow_null=True)
    publication_date = serializers.DateField(
        allow_null=True,
        help_text="The publication date when one is known; never an archive capture date.",
    )
    date_source = serializers.CharField(
        help_text="given, search_engine, archive_timestamp (published on or before), "
        "estimated or unknown."
    )
    date_unknown = serializers.BooleanField(
        help_text="No date proves the page is older than the claim: check it yourself."
    )
    misinformation = serializers.BooleanField(
        help_text="A known misinformation or satire source: avoid, or corroborate elsewhere."
    )
    fact_checker_refused = serializers.BooleanField(
        source="fact_checker", help_text="A fact-checking site: not allowed as evidence."
    )


class SearchPageSerializer(serializers.Serializer):
    query = serializers.CharField()
    before = serializers.DateField()
    country = serializers.CharField(allow_null=True)
    page = serializers.IntegerField()
    backend = serializers.CharField()
    from_cache = serializers.BooleanField()
    hidden = serializers.IntegerField(help_text="Hidden: the claim's own fact-checking article.")
    dropped = serializers.IntegerField(help_text="Dropped: dated on or after the claim date.")
    search_id = serializers.IntegerField(source="log.pk", allow_null=True)
    results = SearchResultSerializer(many=True)


class OpenPageSerializer(serializers.Serializer):
    url = WebAddressField()
    task = serializers.IntegerField(required=False)
    search = serializers.IntegerField(
        required=False, help_text="The search_id of the search the page was found with."
    )


class OpenedPageSerializer(serializers.Serializer):
    url = serializers.CharField(source="page.url")
    final_url = serializers.CharField(source="page.final_url")
    title = serializers.CharField(source="page.title")
    sentences = serializers.ListField(child=serializers.CharField(), source="page.sentences")
    published = serializers.DateField(source="page.published", allow_null=True)
    date_source = serializers.CharField(source="page.date_source")
    date_unknown = serializers.BooleanField()
    published_on_or_after_claim_date = serializers.BooleanField()
    misinformation = serializers.BooleanField()
    fact_checker_refused = serializers.BooleanField(source="fact_checker")
    problem = serializers.CharField(
        allow_null=True, help_text="Why this page cannot be evidence for the claim, if so."
    )
