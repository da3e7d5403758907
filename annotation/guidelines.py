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
