"""Browser steps shared by the end-to-end tests: what each person does on their screens."""

from pathlib import Path

from tests.e2e.conftest import sign_in


def start_next(page, phase: int) -> None:
    page.goto("/annotate/")
    page.locator(f"form[action$='/phase/{phase}/next/'] button").click()
    page.wait_for_url("**/annotate/tasks/*/")


def open_as(new_page, username: str, password: str | None = None):
    page = new_page()
    if password is None:
        sign_in(page, username)
    else:
        sign_in(page, username, password)
    return page


def first_sign_in(new_page, username: str, one_time_password: str):
    """Sign in with the password a manager handed over: the site asks for one's own first."""
    page = open_as(new_page, username, one_time_password)
    page.wait_for_url("**/password/")
    own = f"{username}'s own passphrase 2020"
    page.fill("#id_old_password", one_time_password)
    page.fill("#id_new_password1", own)
    page.fill("#id_new_password2", own)
    with page.expect_navigation():
        page.get_by_role("button", name="Change password").click()
    return page


def normalise(page, text: str, label: str) -> None:
    start_next(page, 1)
    card = page.locator("[data-claim-card]").first
    card.locator("textarea[name$='-text']").fill(text)
    card.get_by_label(label, exact=True).check()
    card.locator("input[name$='-claim_date']").fill("2020-10-30")
    card.get_by_label("Numerical Claim").check()
    card.get_by_label("Written Evidence").check()
    with page.expect_navigation():
        page.get_by_role("button", name="Submit claims").click()


def fill_answer(answer, *, kind="Extractive", text="", url="", medium="Web text", explanation=""):
    answer.get_by_label(kind, exact=True).check()
    if kind == "Boolean":
        answer.get_by_label(text, exact=True).check()
        answer.locator("textarea[name$='-boolean_explanation']").fill(explanation)
    elif kind != "Unanswerable":
        answer.locator("textarea[name$='-text']").fill(text)
    if kind != "Unanswerable":
        answer.locator("input[name$='-source_url']").fill(url)
        answer.locator("select[name$='-source_medium']").select_option(medium)


def write_question(page, index: int, question: str, **answer) -> None:
    if index > 0:
        page.get_by_role("button", name="+ Add a question").click()
    card = page.locator("[data-question]").nth(index)
    card.locator("textarea[data-question-text]").fill(question)
    fill_answer(card.locator("[data-answer]").first, **answer)


def choose_verdict_and_confirm(page, verdict: str) -> None:
    page.locator("#verdict").get_by_label(verdict, exact=True).check()
    with page.expect_navigation():
        page.get_by_role("button", name="Check and submit").click()
    assert page.get_by_text("Do these questions and answers alone lead to your verdict?").count()
    with page.expect_navigation():
        page.get_by_role("button", name="Yes, confirm and submit").click()


def answer_questions(page, verdict: str, extra_question: bool = False) -> None:
    start_next(page, 2 if not extra_question else 4)
    offset = page.locator("[data-question]").count() if extra_question else 0
    if extra_question:
        write_question(
            page,
            offset,
            "Did the council publish a correction about parks spending?",
            kind="Boolean",
            text="No",
            url="https://council.example.gov/news",
            explanation="Its news page lists no correction.",
        )
    else:
        write_question(
            page,
            0,
            "How much did the council budget for parks in 2019?",
            text="2.1 million pounds",
            url="https://council.example.gov/budget-2019",
        )
        write_question(
            page,
            1,
            "Did the council announce extra parks money in 2019?",
            kind="Boolean",
            text="No",
            url="https://council.example.gov/news",
            explanation="No announcement appears in its news archive.",
        )
    choose_verdict_and_confirm(page, verdict)


def check(page, phase: int, verdict: str) -> None:
    start_next(page, phase)
    page.locator("#verdict").get_by_label(verdict, exact=True).check()
    page.locator("#justification").fill(f"The answers point to {verdict}.")
    with page.expect_navigation():
        page.get_by_role("button", name="Submit check").click()


# --- Managers and researchers -------------------------------------------------------------


def import_articles(page, path) -> None:
    page.goto("/annotate/manage/articles/")
    page.set_input_files("#id_file", str(path))
    with page.expect_navigation():
        page.get_by_role("button", name="Import articles").click()


def create_annotators(page, usernames: list[str], phases=(1, 2, 3, 4, 5)) -> dict[str, str]:
    """Bulk-create accounts on the People page; returns the one-time passwords it shows."""
    page.goto("/annotate/manage/people/")
    page.fill("#id_usernames", "\n".join(usernames))
    for box in page.locator("input[name=phases]").all():
        box.set_checked(int(box.get_attribute("value")) in phases)
    if set(phases) & {1, 2, 3}:
        # Skipping training is a waiver, and a waiver needs its reason.
        page.fill("#id_waiver_reason", "end-to-end test crew, trained by the script")
    with page.expect_navigation():
        page.get_by_role("button", name="Create accounts").click()
    rows = page.locator("section.notice table tbody tr")
    return {
        rows.nth(i).locator("td").nth(0).inner_text(): rows.nth(i).locator("code").inner_text()
        for i in range(rows.count())
    }


def export_dataset(page, into: Path) -> Path:
    """Start an export of every accepted claim, wait for it, download it into a folder."""
    page.goto("/exports/")
    page.get_by_role("button", name="Start export").click()
    page.wait_for_url("**/exports/*/")
    link = page.locator("#job-progress a.button")
    link.wait_for(timeout=30_000)
    with page.expect_download() as download:
        link.click()
    path = into / download.value.suggested_filename
    download.value.save_as(path)
    return path
