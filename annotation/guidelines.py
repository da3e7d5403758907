"""Guideline text shown on the annotation screens: help texts, tooltips, definitions.

Written in our own words from the AVeriTeC annotation guidelines (Appendix J of the paper).
Kept here, not in templates, so every screen and the API explain things the same way.
"""

from annotation.vocabulary import ClaimType, Strategy, Verdict

VERDICT_HELP = {
    Verdict.SUPPORTED: "The evidence backs the claim.",
    Verdict.REFUTED: "The evidence contradicts the claim, or makes it very unlikely.",
    Verdict.NOT_ENOUGH_EVIDENCE: (
        "Nothing settles the claim either way, or part of it stays open. Use this too when a "
        "fact-checker calls a claim false only because no support for it exists."
    ),
    Verdict.CONFLICTING: (
        "The claim is misleading: it cherry-picks, is true but misleading, or the evidence "
        "contradicts itself."
    ),
}

CLAIM_TYPE_HELP = {
    ClaimType.EVENT_PROPERTY: "Whether something happened, or whether something has a property.",
    ClaimType.NUMERICAL: "A number, a comparison of numbers, or a numerical trend.",
    ClaimType.QUOTE: "Whether the person named really said the quoted words.",
    ClaimType.CAUSAL: "Whether one thing caused or led to another.",
    ClaimType.POSITION: "Which stance a public figure takes or took on a policy or idea.",
    ClaimType.SPECULATIVE: "A prediction about the future. (Not kept for later phases.)",
    ClaimType.OPINION: "An opinion rather than a checkable fact. (Not kept for later phases.)",
    ClaimType.MEDIA_PUBLISHING: (
        "Where an image, video or audio clip really comes from, or whether it was doctored. "
        "(Not kept for later phases.)"
    ),
    ClaimType.MEDIA_ANALYSIS: (
        "Checking it needs analysis of the media itself, such as who speaks in a clip. "
        "(Not kept for later phases.)"
    ),
}

STRATEGY_HELP = {
    Strategy.WRITTEN_EVIDENCE: "The fact-checker found written sources that confirm or deny it.",
    Strategy.NUMERICAL_COMPARISON: "The fact-checker compared numbers.",
    Strategy.CONSULTATION: "The fact-checker asked experts or the people involved.",
    Strategy.SATIRICAL_SOURCE: "The fact-checker traced the claim to a satirical site.",
    Strategy.MEDIA_SOURCE_DISCOVERY: (
        "The fact-checker found the original of an image, video or sound clip. "
        "(Needs more than text: not kept for later phases.)"
    ),
    Strategy.IMAGE_ANALYSIS: "The fact-checker analysed images. (Not kept for later phases.)",
    Strategy.VIDEO_ANALYSIS: "The fact-checker analysed video. (Not kept for later phases.)",
    Strategy.AUDIO_ANALYSIS: "The fact-checker analysed audio. (Not kept for later phases.)",
    Strategy.GEOLOCATION: (
        "The fact-checker worked out where a picture or video was taken. "
        "(Not kept for later phases.)"
    ),
    Strategy.FACT_CHECKER_REFERENCE: (
        "The fact-checker relied on an earlier fact-check of the same claim. (A claim with only "
        "this strategy is not kept for later phases.)"
    ),
}

P1_FIELD_HELP = {
    "text": (
        "The claim as a statement someone who has not read the article can check. Stay close "
        "to the original wording; add only what is needed to understand it."
    ),
    "fact_checker_label": (
        "The fact-checker's conclusion, mapped to our four labels — not your own opinion."
    ),
    "claim_date": (
        "When the claim was first made (not when the article appeared). With several dates, "
        "take the earliest; with a vague one, its earliest day."
    ),
    "date_as_written": 'Type the date as the article gives it, e.g. "February 2017".',
    "speaker": "Who made the claim, e.g. a politician or an organisation.",
    "reporting_source": (
        "Where the claim was published, e.g. a newspaper or Facebook; may differ from the speaker."
    ),
    "original_claim_url": (
        "A link to the original post or article the fact-checker examined, if the article "
        "gives one that still works."
    ),
    "media_url": "If the claim is or refers to an image, video or audio clip: a link to it.",
    "image_transcription": "If the claim is an image with text in it, type the text here.",
    "location_iso_code": "The country the claim is about or was made in.",
    "claim_types": "What kind of claim it is; choose all that fit.",
    "fact_checking_strategies": "How the fact-checker went about it; choose all that apply.",
}

P1_GUIDE = [
    "Read the whole article first and find the claim it actually checks — often the first "
    "sentence, not the headline.",
    "Split claims with independent parts into separate claims; each must make sense alone.",
    'Turn questions into statements, remove a leading "Says", and replace pronouns such as '
    '"we" or "she" with who they mean.',
    "If the claim is too vague to check, use the more specific version the article examines.",
    "Record the fact-checker's verdict, even if you disagree with it.",
    "If the article is behind a paywall, shows an error or does not load, report it and skip.",
]

SKIP_HELP = "Use this when the article cannot be read. The reason is kept for the managers."

ANSWER_TYPE_HELP = {
    "Extractive": "Copied word for word from the source.",
    "Abstractive": "Your own short summary of what the source says.",
    "Boolean": "A plain Yes or No, with a sentence explaining it.",
    "Unanswerable": "You searched and found no answer; no source needed.",
}

SOURCE_MEDIUM_HELP = {
    "Web text": "The text of a web page.",
    "PDF": "A PDF document.",
    "Metadata": "The claim's own metadata (its date, speaker, source); no web address.",
    "Web table": "A table on a web page.",
    "Image/graphic": "An image, chart or graphic.",
    "Video": "A video.",
    "Audio": "An audio recording or podcast.",
    "Other": "Anything else.",
}

P2_GUIDE = [
    "Ask the questions a fact-checker would need answered to verify the claim, one fact at a "
    "time. Do not ask whether the claim itself is true.",
    "Answer from sources published before the claim date: the search panel only finds those. "
    "The links in the fact-checking article are a good start; the article itself and other "
    "fact-checking sites are not allowed as sources.",
    "Copy the answer from the source when you can (extractive); otherwise summarise it "
    "(abstractive), answer Yes or No with an explanation (Boolean), or say nothing could be "
    "found (unanswerable).",
    "Sites known for misinformation or satire are marked. You may cite them, for instance to "
    "show where a claim started, but back the answer with a second source.",
    "Give your verdict from the questions and answers alone. If after about ten minutes you "
    "still lack evidence, decide with what you have.",
    "If the claim turns out to need images, video or audio to check, report it instead.",
]

P4_GUIDE = [
    "Two annotators disagreed about this claim. Their verdicts and the quality checker's notes "
    "are shown above the pairs.",
    "Fix or extend the question-answer pairs so that they settle the claim; you may edit, add "
    "and remove questions and answers.",
    "Not Enough Evidence is a last resort here: first try to find the missing evidence.",
    *P2_GUIDE[1:4],
]

# First-time tours: (CSS selector of the part shown, what to say about it).
TOURS = {
    "p1": [
        (
            "#article-pane",
            "The fact-checking article opens here (an archived copy). Use the links "
            "above it if it does not show.",
        ),
        ("#guide", "The guideline for this phase is one click away, with the keyboard shortcuts."),
        (
            "#claims",
            "Write each claim the article checks as a statement that stands on its own, "
            "with its date, speaker and kind. Hints appear under the text as you type.",
        ),
        ("#add-claim", "If the article checks several independent claims, add one card per claim."),
        (
            "#save-status",
            "Your work is saved every few seconds. You can close the page and come back.",
        ),
        ("#skip", "If the article is behind a paywall, broken or does not load, report it here."),
    ],
    "p2": [
        (
            "#claim-head",
            "This is the claim to verify, with what phase 1 found out about it. Other "
            "claims from the same article are listed so you do not answer for them.",
        ),
        (
            "#questions",
            "Ask one question per fact the verdict depends on, and answer each from a "
            "source. Choose the kind of answer first.",
        ),
        (
            "#search-tab",
            "Search the web as it was before the claim date. Use a result as the "
            "source of the answer you are writing, or open it and select the passage.",
        ),
        ("#verdict", "When the questions and answers settle the claim, choose the verdict."),
        ("#timer", "After about ten minutes without enough evidence, decide with what you have."),
        ("#report", "If the claim cannot be checked from text, report it here."),
    ],
    "p4": [
        ("#dispute", "Two annotators disagreed. Here is why, with the checker's notes."),
        (
            "#questions",
            "The existing questions and answers are loaded: fix, extend or remove them.",
        ),
        ("#search-tab", "Search the web as it was before the claim date for the missing evidence."),
        ("#verdict", "Then give your verdict from the questions and answers alone."),
    ],
}

CHECK_GUIDE = [
    "Judge the claim from the questions and answers shown here and from common-sense knowledge "
    "only. Do not search for more.",
    "Choose the verdict the answers support. If you cannot make sense of the claim, mark it "
    "unreadable instead.",
    "Explain the verdict in your own words: write out any calculation, comparison or rounding; "
    "for Not Enough Evidence say what is missing; for Conflicting Evidence say which answers "
    "disagree or what is cherry-picked.",
    "Flag the problems you notice in the claim, a question or an answer; flags help the team "
    "improve the data even when your verdict agrees.",
]
POST_CONTROL_EXTRA = (
    "Choose “Claim too vague” only when you understand the claim but it can reasonably be "
    "read in ways that lead to different verdicts."
)
JUSTIFICATION_HELP = (
    "How the answers lead to your verdict. State calculations and comparisons explicitly; say "
    "what is missing (Not Enough Evidence) or which answers conflict (Conflicting Evidence)."
)
TOURS["p3"] = [
    ("#claim-head", "The claim and its metadata. You see nothing else about where it came from."),
    (
        "#pairs",
        "The questions and answers to judge. Flag anything wrong with a question or an "
        "answer with the boxes beside it.",
    ),
    ("#verdict", "Give the verdict these answers support, or mark the claim unreadable."),
    ("#justification-field", "Explain how the answers lead to the verdict."),
]
TOURS["p5"] = TOURS["p3"]
