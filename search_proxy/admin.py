from django.contrib import admin

from search_proxy.models import Source


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    list_display = ("url", "archive_status", "archived_at", "archive_attempts")
    list_filter = ("archive_status",)
    search_fields = ("url", "normalized_url")
