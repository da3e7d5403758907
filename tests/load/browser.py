"""What a browser sends from the editors, read off the real pages: the editor form's fields
as the browser's FormData collects them (csrf token, draft_version, tab_id and the restored
draft included), the htmx autosave's headers, and the native submit with its button.

The load run (tests/load/run.py) fills the fields as an annotator would and posts them; it
never builds a request body the page does not hold, so a renamed field or a new hidden input
reaches the load run as it reaches a browser.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from urllib.parse import urljoin

from lxml import html as lxml_html

# The autosave answer replaces the form's version field out of band (_save_status.html).
SAVED_VERSION = re.compile(r'<input[^>]*id="draft-version"[^>]*value="(\d+)"')
_NOT_SENT = {"submit", "button", "image", "reset", "file"}


@dataclass
class Choice:
    value: str
    attrs: dict


@dataclass
class EditorForm:
    """The page's `form[data-editor]` and what a browser would post from it."""

    page_url: str
    form_id: str
    action: str  # the native submit (a hand-in)
    autosave_url: str  # hx-post: the htmx autosave
    fields: list[tuple[str, str]]
    # Every radio and checkbox offered, checked or not, by name: what the annotator may tick.
    choices: dict[str, list[Choice]] = field(default_factory=dict)
    buttons: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (name, value)

    @classmethod
    def of(cls, page_url: str, text: str) -> EditorForm | None:
        doc = lxml_html.fromstring(text)
        forms = doc.xpath("//form[@data-editor]")
        if not forms:
            return None
        return cls.from_element(page_url, doc, forms[0])

    @classmethod
    def from_element(cls, page_url: str, doc, form) -> EditorForm:
        form_id = form.get("id", "")
        editor = cls(
            page_url=page_url,
            form_id=form_id,
            action=urljoin(page_url, form.get("action") or page_url),
            autosave_url=urljoin(page_url, form.get("hx-post") or ""),
            fields=[],
        )
        for element in doc.iter("input", "select", "textarea", "button"):
            if not _belongs_to(element, form, form_id):
                continue
            name, tag = element.get("name", ""), element.tag
            kind = (element.get("type") or ("submit" if tag == "button" else "text")).lower()
            if kind in ("submit", "image") and element.get("id"):
                editor.buttons[element.get("id")] = (name, element.get("value", ""))
            if not name or "disabled" in element.attrib or kind in _NOT_SENT:
                continue
            if tag == "input" and kind in ("radio", "checkbox"):
                value = element.get("value", "on")
                editor.choices.setdefault(name, []).append(Choice(value, dict(element.attrib)))
                if "checked" in element.attrib:
                    editor.fields.append((name, value))
            elif tag == "select":
                editor.fields.extend((name, value) for value in _selected(element))
            elif tag == "textarea":
                # The HTML parser drops a textarea's first newline, as browsers do.
                editor.fields.append((name, element.text or ""))
            else:
                editor.fields.append((name, element.get("value", "")))
        return editor

    # --- typing -----------------------------------------------------------------------------

    def get(self, name: str, default: str = "") -> str:
        return next((value for key, value in self.fields if key == name), default)

    def set(self, name: str, *values: str) -> None:
        """Give a field its value(s), in place when the page has it (a checkbox group: all
        its ticked values)."""
        at = next((i for i, (key, _) in enumerate(self.fields) if key == name), None)
        self.fields = [(key, value) for key, value in self.fields if key != name]
        new = [(name, value) for value in values]
        if at is None:
            self.fields.extend(new)
        else:
            self.fields[at:at] = new

    def drop(self, pattern: re.Pattern) -> None:
        """Remove fields, as removing a card removes its inputs."""
        self.fields = [(key, value) for key, value in self.fields if not pattern.match(key)]

    # --- sending -------------------------------------------------------------------------

    def open_tab(self) -> None:
        """editor.js gives every page load a fresh tab id."""
        self.set("tab_id", str(uuid.uuid4()))

    def body(self, submitter: str | None = None) -> list[tuple[str, str]]:
        """The posted fields; a native submit adds its button's name and value."""
        sent = list(self.fields)
        if submitter is not None:
            name, value = self.buttons[submitter]
            if name:
                sent.append((name, value))
        return sent

    def htmx_headers(self, base_url: str) -> dict[str, str]:
        """What htmx adds to the autosave: its own headers, and the X-CSRFToken that
        base.html's hx-headers puts on every htmx request."""
        return {
            "HX-Request": "true",
            "HX-Current-URL": self.page_url,
            "HX-Target": "save-status",
            "HX-Trigger": self.form_id,
            "X-CSRFToken": self.get("csrfmiddlewaretoken"),
            **navigation_headers(base_url, self.page_url),
        }

    def saved(self, response_text: str) -> int | None:
        """The version an autosave answered with; the form carries it from then on."""
        found = SAVED_VERSION.search(response_text)
        if found is None:
            return None
        self.set("draft_version", found.group(1))
        return int(found.group(1))


def navigation_headers(base_url: str, page_url: str) -> dict[str, str]:
    """A same-origin post from a page: Django's CSRF check compares the Origin."""
    return {"Origin": base_url, "Referer": page_url}


def page_form(page_url: str, text: str, action_part: str) -> EditorForm | None:
    """Any other form of a page, by a piece of its action (the P2/P4 confirmation)."""
    doc = lxml_html.fromstring(text)
    for form in doc.iter("form"):
        if action_part in (form.get("action") or ""):
            return EditorForm.from_element(page_url, doc, form)
    return None


def _belongs_to(element, form, form_id: str) -> bool:
    # Inputs inside <template> are not in the document until a card is added.
    if any(parent.tag == "template" for parent in element.iterancestors()):
        return False
    owner = element.get("form")
    if owner is not None:
        return owner == form_id
    return any(parent is form for parent in element.iterancestors())


def _selected(select) -> list[str]:
    options = select.findall(".//option")
    chosen = [o for o in options if "selected" in o.attrib]
    if not chosen and options and "multiple" not in select.attrib:
        chosen = options[:1]
    return [o.get("value", o.text_content()) for o in chosen]
