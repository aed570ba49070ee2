"""Linking question words to the nodes they mention."""
import pytest

from benchmark.graph import build_graph
from retrievers.linking import link_mentions, words_match

ARCH = build_graph({
    "nodes": [
        {"id": "user", "label": "Customer"},
        {"id": "gateway", "label": "API Gateway"},
        {"id": "auth", "label": "Auth Service"},
        {"id": "users_db", "label": "Users DB"},
        {"id": "orders_db", "label": "Orders DB (primary)"},
        {"id": "backend", "label": "Orders Backend"},
        {"id": "backend.api", "label": "Orders API"},
        {"id": "api", "label": "API"},
        {"id": "pay", "label": "Payment Processor"},
        {"id": "s3", "label": "S3 bucket"},
        {"id": "s4", "label": "S4 bucket"},
    ],
    "edges": [],
})

RU = build_graph({
    "nodes": [
        {"id": "auth", "label": "Сервис авторизации"},
        {"id": "db", "label": "База данных пользователей"},
        {"id": "gw", "label": "Шлюз API"},
        {"id": "tree", "label": "Ёлка"},
    ],
    "edges": [],
})


@pytest.mark.parametrize("text, expected", [
    ("Can the customer reach the users db?", ["user", "users_db"]),
    ("CAN THE CUSTOMER REACH THE USERS DB?", ["user", "users_db"]),
    ("Does the API Gateway call the Orders API?", ["gateway", "backend.api"]),
    ("Is there an arrow from the API to the Orders Backend?", ["api", "backend"]),
])
def test_case_and_longest_name_wins(text, expected):
    assert link_mentions(text, ARCH) == expected


def test_typos_link_to_the_intended_node():
    assert link_mentions("Does the Paymnet Processor write to Users DB?", ARCH) == ["pay", "users_db"]
    assert link_mentions("What comes after the Auht Service?", ARCH) == ["auth"]


def test_labels_with_punctuation_and_brackets():
    assert link_mentions("Which nodes lead into Orders DB?", ARCH) == ["orders_db"]
    assert link_mentions("Which nodes lead into 'Orders DB (primary)'?", ARCH) == ["orders_db"]
    assert link_mentions("Is the API-Gateway before auth-service?", ARCH) == ["gateway", "auth"]


def test_id_names_link_too():
    assert link_mentions("Does orders_db feed users_db?", ARCH) == ["orders_db", "users_db"]


@pytest.mark.parametrize("text, expected", [
    ("Ведёт ли сервис авторизации к базе данных пользователей?", ["auth", "db"]),
    ("Какие узлы следуют за Сервисом Авторизации?", ["auth"]),
    ("Куда идёт поток после шлюза API?", ["gw"]),
    ("Что идёт после елки?", ["tree"]),
])
def test_russian_inflection_and_yo(text, expected):
    assert link_mentions(text, RU, "ru") == expected


def test_never_links_what_is_not_mentioned():
    assert link_mentions("Is the order processed by the database?", ARCH) == []
    assert link_mentions("Which step is used next?", ARCH) == []
    # a digit decides: S3 is not S4
    assert link_mentions("Where does the S3 bucket send events?", ARCH) == ["s3"]
    # the answer and certificate are never read: only the text goes in
    assert link_mentions("", ARCH) == []


def test_word_matching_rules():
    assert words_match("сервиса", "сервис")
    assert words_match("services", "service")
    assert not words_match("used", "user")
    assert not words_match("auth", "path")
    assert not words_match("v1", "v2")


def test_duplicate_labels_link_every_node_with_that_name():
    g = build_graph({"nodes": [{"id": "eu.db", "label": "DB"}, {"id": "us.db", "label": "DB"},
                               {"id": "eu", "label": "EU"}], "edges": []})
    assert link_mentions("What reads from the DB?", g) == ["eu.db", "us.db"]


def test_states_that_share_a_stem_stay_apart():
    g = build_graph({"nodes": [{"id": "closed", "label": "CLOSED"}, {"id": "closing", "label": "CLOSING"},
                               {"id": "close_wait", "label": "CLOSE-WAIT"}, {"id": "time_wait", "label": "TIME-WAIT"}],
                     "edges": []})
    assert link_mentions("Can CLOSE-WAIT get to TIME-WAIT without going back to CLOSED?", g) == [
        "close_wait", "time_wait", "closed"]
    assert link_mentions("How many states lead directly to CLOSING?", g) == ["closing"]


def test_name_words_in_another_order():
    g = build_graph({"nodes": [{"id": "iso", "label": "Isolate host"}, {"id": "rm", "label": "Remove malware"},
                               {"id": "pw", "label": "Set new password"}], "edges": []})
    assert link_mentions("Once a host is isolated, can malware be removed?", g) == ["iso", "rm"]
    assert link_mentions("Does setting a new password unlock the account?", g) == ["pw"]


def test_ids_are_matched_word_for_word_only():
    g = build_graph({"nodes": [{"id": "check", "label": "Password correct?"}, {"id": "billing", "label": "Invoices"}],
                     "edges": []})
    assert link_mentions("Can an order be billed?", g) == []  # "billed" is not the id "billing"
    assert link_mentions("What follows billing?", g) == ["billing"]


def _spellings(word: str) -> set[str]:
    """``word`` misspelt and inflected every way one edit or ending makes, the first letter included."""
    out = {word[:i] + word[i + 1:] for i in range(len(word))}
    out |= {word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(len(word) - 1)}
    out |= {word[:i] + c + word[i + 1:] for i in range(len(word)) for c in "aeoxиоя"}
    out |= {word + end for end in ("s", "es", "ed", "ing", "а", "ы", "ами", "ов")}
    return {w for w in out if w and w != word}


def test_words_that_match_start_with_the_same_letter():
    # LabelIndex compares a question's word only with the names' words that start like it: a rule
    # of words_match that let words starting differently match would lose those links
    from benchmark.dataset import load_dataset
    from retrievers.text import raw_words

    ds, _ = load_dataset()
    label_words = sorted({w for d in ds.diagrams.values() for n, a in d.graph.nodes(data=True)
                          for w in raw_words(str(a.get("label") or n)) if len(w) >= 3})
    pairs = [(v, w) for w in label_words for v in _spellings(w) if words_match(v, w)]
    assert len(label_words) > 300 and len(pairs) > 3000
    assert [(v, w) for v, w in pairs if v[0] != w[0]] == []


def test_a_text_linked_again_gives_the_same_nodes():
    from retrievers.linking import label_index

    index = label_index(ARCH)
    first = index.link("Does the Orders API call the Payment Processor?")
    first.append("changed by the caller")
    assert index.link("Does the Orders API call the Payment Processor?") == ["backend.api", "pay"]
