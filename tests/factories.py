"""Model factories named by the state they build (see STYLE.md)."""

import datetime

import factory
from django.utils import timezone

from annotation.models import Answer, Article, Claim, EvidenceRound, Question, Task, User
from annotation.vocabulary import AnswerType, ClaimType, Phase, SourceMedium, Strategy, Verdict
from search_proxy.webaddress import normalize_url


class AnnotatorFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"annotator{n}")
    role = User.Role.ANNOTATOR
    qualified_phases = factory.LazyFunction(lambda: [1, 2, 3, 4, 5])
    password = factory.django.Password("correct horse battery")


class ManagerFactory(AnnotatorFactory):
    username = factory.Sequence(lambda n: f"manager{n}")
    role = User.Role.MANAGER


class ArticleFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Article

    url = factory.Sequence(lambda n: f"https://factcheck.example.org/2020/article-{n}")
    normalized_url = factory.LazyAttribute(lambda article: normalize_url(article.url))
    title = factory.Sequence(lambda n: f"Fact check number {n}")
    publisher = "factcheck.example.org"


class ClaimWaitingForQuestionsFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Claim

    article = factory.SubFactory(ArticleFactory, state=Article.State.NORMALISED)
    position = factory.Sequence(lambda n: n)
    text = factory.Sequence(lambda n: f"The city council spent {n} million on new parks in 2019.")
    fact_checker_label = Verdict.REFUTED
    claim_date = datetime.date(2020, 10, 31)
    speaker = "A council member"
    location_iso_code = "GB"
    claim_types = factory.LazyFunction(lambda: [ClaimType.NUMERICAL.value])
    fact_checking_strategies = factory.LazyFunction(lambda: [Strategy.WRITTEN_EVIDENCE.value])
    state = Claim.State.QUESTIONS


class AcceptedClaimFactory(ClaimWaitingForQuestionsFactory):
    state = Claim.State.ACCEPTED
    label = Verdict.REFUTED
    justification = "The council's budget shows a smaller figure."
    accepted_at = factory.LazyFunction(timezone.now)


class SubmittedEvidenceRoundFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = EvidenceRound

    claim = factory.SubFactory(AcceptedClaimFactory)
    phase = Phase.QUESTIONS
    verdict = Verdict.REFUTED
    submitted_at = factory.LazyFunction(timezone.now)


class QuestionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Question

    evidence_round = factory.SubFactory(SubmittedEvidenceRoundFactory)
    position = factory.Sequence(lambda n: n)
    text = "How much did the council spend on parks in 2019?"


class AnswerFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Answer

    question = factory.SubFactory(QuestionFactory)
    position = factory.Sequence(lambda n: n)
    text = "2.1 million pounds"
    answer_type = AnswerType.EXTRACTIVE
    source_url = "https://council.example.gov/budget-2019"
    source_medium = SourceMedium.WEB_TEXT


class PooledTaskFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Task

    phase = Phase.QUESTIONS
    claim = factory.SubFactory(ClaimWaitingForQuestionsFactory)
    article = factory.LazyAttribute(lambda task: task.claim.article if task.claim else None)
    status = Task.Status.POOLED


class GoldClaimFactory(AcceptedClaimFactory):
    """An accepted claim imported from a dataset file, with one QA pair: a training claim."""

    class Meta:
        skip_postgeneration_save = True

    origin = Claim.Origin.IMPORTED
    article = factory.SubFactory(ArticleFactory, state=Article.State.IMPORTED)

    @factory.post_generation
    def evidence(claim, create, extracted, **kwargs):
        if create:
            AnswerFactory(question__evidence_round__claim=claim)
