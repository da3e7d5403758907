"""A small, made-up dataset in the AVeriTeC format for demos on machines without dev.json.

The claims are invented for illustration (the town of Eastfield does not exist); they only
exercise every part of the format: labels, answer types, media, nulls and re-annotation.
"""

from annotation.vocabulary import NO_ANSWER_TEXT

ARCHIVE = "https://web.archive.org/web/20200101000000"
_TOPICS = [
    ("Eastfield's council spent 4 million pounds on new cycle lanes in 2019.", "Refuted"),
    ("Eastfield General Hospital opened a second maternity ward in March 2020.", "Supported"),
    (
        "Unemployment in Eastfield doubled between 2018 and 2020.",
        "Conflicting Evidence/Cherrypicking",
    ),
    ("The mayor of Eastfield said the town would plant 10,000 trees by 2025.", "Supported"),
    ("Eastfield's river is the cleanest in the country.", "Not Enough Evidence"),
    ("A new law in Eastfield bans cars from the town centre on Sundays.", "Refuted"),
]


def sample_records(count: int = 12) -> list[dict]:
    records = []
    for n in range(count):
        text, label = _TOPICS[n % len(_TOPICS)]
        day = 1 + n % 28
        site = f"https://factcheck.example.org/2020/{n + 1}"
        record_url = f"https://council.example.gov/records/{n + 1}"
        questions = [
            {
                "question": f"What do official records say about this? ({n + 1})",
                "answers": [
                    {
                        "answer": "The council's published figures give a different number.",
                        "answer_type": "Extractive",
                        "source_url": record_url,
                        "source_medium": "Web text",
                        "cached_source_url": f"{ARCHIVE}/{record_url}",
                    }
                ],
            },
            {
                "question": "Did a local newspaper report it at the time?",
                "answers": [
                    {
                        "answer": "No",
                        "answer_type": "Boolean",
                        "source_url": "https://news.example.com/archive",
                        "source_medium": "Web text",
                        "boolean_explanation": "The paper's archive has no such story.",
                        "cached_source_url": None,
                    }
                ],
            },
            {
                "question": "Is there a statement from the person quoted?",
                "answers": [
                    {
                        "answer": NO_ANSWER_TEXT,
                        "answer_type": "Unanswerable",
                        "source_url": "",
                        "source_medium": "",
                    }
                ],
            },
        ]
        records.append(
            {
                "claim": text,
                "required_reannotation": n % 4 == 3,
                "label": label,
                "justification": "The answers above settle the claim as labelled.",
                "claim_date": f"{day}-{1 + n % 12}-2020",
                "speaker": "Eastfield council member" if n % 3 else None,
                "original_claim_url": None,
                "fact_checking_article": site,
                "reporting_source": "Facebook" if n % 2 else None,
                "location_ISO_code": "GB",
                "claim_types": ["Numerical Claim"]
                if "million" in text
                else ["Event/Property Claim"],
                "fact_checking_strategies": ["Written Evidence"],
                "questions": questions,
                "cached_original_claim_url": None,
            }
        )
    return records
