from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin

from annotation import accounts
from annotation.models import (
    AgreementSampling,
    Answer,
    Article,
    AuditEntry,
    Batch,
    Claim,
    EvidenceRound,
    PhaseQuota,
    QualificationThresholds,
    Question,
    Task,
    TrainingAnswer,
    TrainingDraw,
    Transition,
    User,
)


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    list_display = ("username", "role", "qualified_phases", "is_active", "last_login")
    list_filter = ("role", "is_active", "is_staff")
    fieldsets = (
        *DjangoUserAdmin.fieldsets,  # type: ignore[misc]  # set on UserAdmin; the stub allows None
        ("Annotation", {"fields": ("role", "qualified_phases", "completed_tours")}),
    )

    # Only a superuser changes a superuser, or makes one: staff who may edit accounts
    # could otherwise raise themselves or lock the superuser out.
    def has_change_permission(self, request, obj=None) -> bool:
        if obj is not None and obj.is_superuser and not request.user.is_superuser:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None) -> bool:
        if obj is not None and obj.is_superuser and not request.user.is_superuser:
            return False
        return super().has_delete_permission(request, obj)

    def get_readonly_fields(self, request, obj=None):
        fields = super().get_readonly_fields(request, obj)
        if not request.user.is_superuser:
            fields = (*fields, "is_superuser", "is_staff", "user_permissions", "groups")
        return fields

    def save_model(self, request, obj, form, change) -> None:
        # The same role rules as the people pages (annotation/accounts.py): a changed role
        # keeps only the phases it may hold and gives back the blind tasks held.
        previous = User.objects.filter(pk=obj.pk).values_list("role", flat=True).first()
        role_changed = change and previous is not None and previous != obj.role
        if role_changed:
            obj.qualified_phases = accounts.phases_a_role_may_hold(obj.role, obj.qualified_phases)
        super().save_model(request, obj, form, change)
        for warning in accounts.role_warnings(
            obj,
            accounts.release_work_the_account_may_not_hold(
                obj, request.user, role_changed=role_changed
            ),
            dropped=[],
        ):
            self.message_user(request, warning, level="warning")


@admin.register(PhaseQuota)
class PhaseQuotaAdmin(admin.ModelAdmin):
    list_display = ("annotator", "phase", "limit")
    list_filter = ("phase",)


@admin.register(Batch)
class BatchAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "source_file", "created_at")
    list_filter = ("kind",)


class ClaimInline(admin.TabularInline):
    model = Claim
    fields = ("position", "text", "state", "label")
    readonly_fields = fields
    extra = 0
    show_change_link = True


@admin.register(Article)
class ArticleAdmin(admin.ModelAdmin):
    list_display = ("__str__", "publisher", "state", "batch", "created_at")
    list_filter = ("state", "skip_reason", "batch")
    search_fields = ("title", "url", "normalized_url", "claimreview_claim")
    inlines = [ClaimInline]


@admin.register(Claim)
class ClaimAdmin(admin.ModelAdmin):
    list_display = ("__str__", "claim_date", "state", "label", "required_reannotation", "origin")
    list_filter = ("state", "label", "origin", "required_reannotation", "is_agreement_sample")
    search_fields = ("text", "speaker", "article__url")
    date_hierarchy = "claim_date"
    raw_id_fields = ("article",)


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ("__str__", "phase", "annotator", "status", "lease_expires_at", "submitted_at")
    list_filter = ("phase", "status", "is_agreement_sample")
    raw_id_fields = ("article", "claim", "annotator")
    search_fields = ("annotator__username",)


class QuestionInline(admin.StackedInline):
    model = Question
    extra = 0
    fields = ("position", "text")


@admin.register(EvidenceRound)
class EvidenceRoundAdmin(admin.ModelAdmin):
    list_display = ("__str__", "phase", "verdict", "submitted_at")
    list_filter = ("phase", "verdict", "is_agreement_sample")
    raw_id_fields = ("claim", "task", "based_on")
    inlines = [QuestionInline]


class AnswerInline(admin.StackedInline):
    model = Answer
    extra = 0
    raw_id_fields = ("source",)
    exclude = ("json_keys",)


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ("__str__", "evidence_round", "position")
    raw_id_fields = ("evidence_round",)
    search_fields = ("text",)
    inlines = [AnswerInline]


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = ("__str__", "answer_type", "source_medium")
    list_filter = ("answer_type", "source_medium")
    raw_id_fields = ("question", "source")
    search_fields = ("text", "source_url")


@admin.register(Transition)
class TransitionAdmin(admin.ModelAdmin):
    list_display = ("created_at", "article", "claim", "from_state", "to_state", "actor", "reason")
    list_filter = ("to_state",)
    raw_id_fields = ("article", "claim", "task", "actor")


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    list_display = ("created_at", "actor", "action", "summary")
    list_filter = ("action",)
    search_fields = ("summary",)


@admin.register(AgreementSampling)
class AgreementSamplingAdmin(admin.ModelAdmin):
    list_display = ("rate", "changed_by", "changed_at")


@admin.register(QualificationThresholds)
class QualificationThresholdsAdmin(admin.ModelAdmin):
    list_display = (
        "changed_at",
        "type_strategy_f1",
        "min_qa_pairs",
        "verdict_accuracy",
        "practice_items",
        "items_per_phase",
        "changed_by",
    )


@admin.register(TrainingDraw)
class TrainingDrawAdmin(admin.ModelAdmin):
    list_display = ("annotator", "phase", "position", "claim", "judged", "drawn_at")
    list_filter = ("phase", "judged")
    raw_id_fields = ("annotator", "claim")


@admin.register(TrainingAnswer)
class TrainingAnswerAdmin(admin.ModelAdmin):
    list_display = ("annotator", "phase", "claim", "created_at")
    list_filter = ("phase",)
    raw_id_fields = ("annotator", "claim")
    readonly_fields = ("answer", "score")
