from django.contrib import admin

from search_proxy.models import (
    Document,
    FactCheckingDomain,
    FetchedPage,
    MisinformationDomain,
    SearchClick,
    SearchLog,
    Source,
)


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    list_display = (
        "url",
        "archive_status",
        "archived_at",
        "lookup_failures",
        "archive_attempts",
        "earliest_capture_at",
    )
    list_filter = ("archive_status",)
    search_fields = ("url", "normalized_url")


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ("url", "title", "published", "date_source", "corpus")
    list_filter = ("date_source", "corpus")
    search_fields = ("normalized_url", "title")
    readonly_fields = ("normalized_url", "created_at")
    date_hierarchy = "published"
    show_full_result_count = False  # counting a million-row index on every page is slow


class DomainRuleAdmin(admin.ModelAdmin):
    list_display = ("domain", "path_prefix", "origin", "note", "created_at")
    list_filter = ("origin",)
    search_fields = ("domain", "path_prefix", "note")
    readonly_fields = ("created_at",)


@admin.register(MisinformationDomain)
class MisinformationDomainAdmin(DomainRuleAdmin):
    pass


@admin.register(FactCheckingDomain)
class FactCheckingDomainAdmin(DomainRuleAdmin):
    pass


class ReadOnlyAdmin(admin.ModelAdmin):
    """Records of what happened: viewable, never edited by hand."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


@admin.register(SearchLog)
class SearchLogAdmin(ReadOnlyAdmin):
    list_display = (
        "created_at",
        "user",
        "query",
        "before",
        "country",
        "page",
        "backend",
        "from_cache",
        "duration_ms",
        "error",
    )
    list_filter = ("backend", "from_cache")
    search_fields = ("query", "user__username")
    date_hierarchy = "created_at"


@admin.register(SearchClick)
class SearchClickAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "user", "url", "outcome", "task_id")
    list_filter = ("outcome",)
    search_fields = ("url", "user__username")
    date_hierarchy = "created_at"


@admin.register(FetchedPage)
class FetchedPageAdmin(ReadOnlyAdmin):
    list_display = ("url", "title", "http_status", "published", "fetched_at", "last_seen_at")
    list_filter = ("date_source",)
    search_fields = ("normalized_url", "title")
