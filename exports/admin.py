from django.contrib import admin

from exports.models import ExportJob, ScoringJob, Webhook, WebhookDelivery


@admin.register(ExportJob)
class ExportJobAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "split",
        "fmt",
        "batch",
        "since",
        "until",
        "status",
        "claims",
        "created_at",
    ]
    list_filter = ["status", "split", "fmt"]
    readonly_fields = ["progress_done", "progress_total", "started_at", "finished_at", "file_name"]


@admin.register(ScoringJob)
class ScoringJobAdmin(admin.ModelAdmin):
    list_display = ["id", "predictions_name", "references_name", "status", "created_at"]
    list_filter = ["status"]
    readonly_fields = ["progress_done", "progress_total", "started_at", "finished_at", "result"]


_DELIVERY_FIELDS = ("event", "status", "attempts", "response_status", "last_error", "created_at")


class DeliveryInline(admin.TabularInline):
    model = WebhookDelivery
    extra = 0
    fields = _DELIVERY_FIELDS
    readonly_fields = _DELIVERY_FIELDS
    show_change_link = True
    ordering = ["-created_at"]


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    list_display = ["url", "owner", "events", "is_active", "created_at"]
    list_filter = ["is_active"]
    inlines = [DeliveryInline]


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = ["id", "event", "webhook", "status", "attempts", "response_status", "created_at"]
    list_filter = ["status", "event"]
    readonly_fields = ["payload", "attempts", "response_status", "last_error", "delivered_at"]
