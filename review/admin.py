from django.contrib import admin

from review.models import ProblemFlag, QualityCheck


class ProblemFlagInline(admin.TabularInline):
    model = ProblemFlag
    extra = 0
    raw_id_fields = ("question", "answer")


@admin.register(QualityCheck)
class QualityCheckAdmin(admin.ModelAdmin):
    list_display = ("__str__", "phase", "verdict", "unreadable", "submitted_at")
    list_filter = ("phase", "verdict", "unreadable", "is_agreement_sample")
    raw_id_fields = ("claim", "task", "evidence_round")
    inlines = [ProblemFlagInline]


@admin.register(ProblemFlag)
class ProblemFlagAdmin(admin.ModelAdmin):
    list_display = ("code", "quality_check", "question", "answer")
    list_filter = ("code",)
    raw_id_fields = ("quality_check", "question", "answer")
