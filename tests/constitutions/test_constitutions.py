"""Constitution files: the bundled library, the schema's error messages, hashing and the CLI verbs."""

from __future__ import annotations

import textwrap

import pytest

from rewardsmith.cli.main import main
from rewardsmith.constitutions.loader import bundled_names, constitution_hash, load_constitution, parse_text
from rewardsmith.constitutions.schema import ConstitutionError

VALID = textwrap.dedent(
    """\
    name: tiny
    description: A two-principle constitution for tests.
    principles:
      - id: correct
        comparison: Which response gives the correct answer?
        critique: Point out every factual or logical error in the response.
        revision: Rewrite the response so that it contains no errors.
      - id: short
        comparison: Which response is shorter while still complete?
        critique: Point out every sentence the user did not need.
        revision: Rewrite the response without the unneeded sentences.
    """
)


def write(tmp_path, text: str, name: str = "c.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_bundled_library_has_the_four_constitutions_and_all_validate():
    names = bundled_names()
    assert {"helpful-harmless", "honest-concise", "math-reasoning", "code-quality"} <= set(names)
    for name in names:
        constitution = load_constitution(name)
        assert constitution.name == name
        assert len(constitution.principles) >= 4
        ids = [p.id for p in constitution.principles]
        assert len(ids) == len(set(ids))


def test_load_by_path_and_hash_ignores_formatting_but_not_content(tmp_path):
    original = load_constitution(write(tmp_path, VALID))
    reformatted = load_constitution(
        write(tmp_path, "# a comment\n" + VALID.replace("name: tiny", "name:   tiny"), "b.yaml")
    )
    changed = load_constitution(write(tmp_path, VALID.replace("shorter while", "briefer while"), "d.yaml"))
    assert constitution_hash(original) == constitution_hash(reformatted)
    assert constitution_hash(original) != constitution_hash(changed)
    assert constitution_hash(original).startswith("sha256:")


# Verdict table: broken file -> every fragment the error must contain (file, field path, what is wrong).
BROKEN = [
    (VALID.replace("  - id: short", "  - id: Short Principle"), ["c.yaml", "principles[1].id", "not a slug"]),
    (
        VALID.replace("    critique: Point out every sentence the user did not need.\n", ""),
        ["c.yaml", "principles[1].critique", "field required"],
    ),
    (VALID.replace("id: short", "id: correct"), ["c.yaml", "principles", "duplicate principle id 'correct'"]),
    (VALID + "colour: blue\n", ["c.yaml", "colour", "unknown field"]),
    (
        VALID.replace("description: A two-principle constitution for tests.\n", ""),
        ["c.yaml", "description", "field required"],
    ),
    (
        VALID.replace("comparison: Which response gives the correct answer?", "comparison: Which?"),
        ["principles[0].comparison", "at least 10 characters"],
    ),
    ("name: x\ndescription: d\nprinciples: []\n", ["c.yaml", "principles", "at least 1"]),
    ("- just\n- a list\n", ["c.yaml", "expected a mapping"]),
    ("name: [unclosed\n", ["c.yaml:2:1", "not valid YAML"]),
    (
        VALID + "templates:\n  critique: '{{ critique_request }} {{ nonsense }}'\n",
        ["templates", "critique", "unknown variable", "nonsense"],
    ),
    (
        VALID + "templates:\n  revision: 'Rewrite it.'\n",
        ["templates", "revision", "missing variable", "revision_request"],
    ),
    (VALID + "templates:\n  comparison: '{{ prompt }} {% if %}'\n", ["templates", "comparison", "not a valid jinja"]),
    (
        VALID + "examples:\n  comparison:\n    - {prompt: p, response_a: a, response_b: b, preferred: C}\n",
        ["examples.comparison[0].preferred", "'A' or 'B'"],
    ),
]


@pytest.mark.parametrize(("text", "fragments"), BROKEN, ids=[fragments[-1] for _, fragments in BROKEN])
def test_broken_constitution_errors_name_file_field_and_problem(tmp_path, text, fragments):
    path = write(tmp_path, text)
    with pytest.raises(ConstitutionError) as info:
        load_constitution(path)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} missing from: {message}"


def test_one_error_line_per_problem(tmp_path):
    text = VALID.replace("id: short", "id: BAD ID").replace(
        "    revision: Rewrite the response so that it contains no errors.\n", ""
    )
    with pytest.raises(ConstitutionError) as info:
        load_constitution(write(tmp_path, text))
    lines = str(info.value).splitlines()
    assert len(lines) == 2
    assert any("principles[0].revision: field required" in line for line in lines)
    assert any("principles[1].id" in line for line in lines)


def test_examples_and_template_overrides_are_accepted():
    text = VALID + textwrap.dedent(
        """\
        examples:
          comparison:
            - {prompt: "2+2?", response_a: "4", response_b: "5", preferred: A, explanation: "4 is correct."}
          revision:
            - {prompt: "2+2?", response: "5", critique: "5 is wrong.", revision: "4"}
        templates:
          critique: "{{ critique_request }} Two sentences."
          revision: "{{ revision_request }} Answer only."
        """
    )
    constitution = parse_text(text, "inline")
    assert constitution.examples.comparison[0].preferred == "A"
    assert constitution.templates.critique.startswith("{{ critique_request }}")


def test_unknown_bundled_name_lists_the_bundled_ones():
    with pytest.raises(ConstitutionError, match="helpful-harmless"):
        load_constitution("no-such-constitution")


def test_cli_list_show_validate(tmp_path, capsys):
    assert main(["constitutions", "list"]) == 0
    listed = capsys.readouterr().out
    for name in ("helpful-harmless", "honest-concise", "math-reasoning", "code-quality"):
        assert name in listed

    assert main(["constitutions", "show", "math-reasoning"]) == 0
    shown = capsys.readouterr().out
    assert "[correct-answer]" in shown and "critique:" in shown

    assert main(["constitutions", "show", "code-quality", "--yaml"]) == 0
    assert capsys.readouterr().out.startswith("# rewardsmith bundled constitution")

    good = write(tmp_path, VALID, "good.yaml")
    bad = write(tmp_path, VALID.replace("id: short", "id: correct"), "bad.yaml")
    assert main(["constitutions", "validate", str(good)]) == 0
    assert "good.yaml: ok (tiny, 2 principles" in capsys.readouterr().out
    assert main(["constitutions", "validate", str(good), str(bad)]) == 1
    captured = capsys.readouterr()
    assert "bad.yaml: principles: duplicate principle id 'correct'" in captured.err


@pytest.mark.parametrize(
    "template",
    [
        "{{ critique_request.__class__ }}",
        "{{ critique_request.__class__.__mro__[1].__subclasses__() }}",
        "{{ critique_request|attr('__class__') }}",
    ],
)
def test_validation_refuses_templates_that_reach_python_internals(tmp_path, template):
    path = tmp_path / "evil.yaml"
    path.write_text(VALID + f'templates:\n  critique: "{template}"\n')
    with pytest.raises(ConstitutionError, match="private attributes"):
        load_constitution(path)


def test_a_judge_built_without_a_state_folder_keeps_its_constitution_template_in_the_cache(tmp_path, monkeypatch):
    from rewardsmith.constitutions.runners import build_pairwise_judge
    from rewardsmith.judges.clients.factory import make_client

    monkeypatch.setenv("REWARDSMITH_CACHE_DIR", str(tmp_path))
    client = make_client("openai", model="gpt-4o-mini", base_url="http://127.0.0.1:9/v1")  # never contacted here
    judge = build_pairwise_judge(client, load_constitution("helpful-harmless"))  # it has comparison examples
    (written,) = (tmp_path / "templates").glob("comparison-*.jinja")
    assert judge.template == str(written)
    assert build_pairwise_judge(client, load_constitution("helpful-harmless")).template == str(written)  # by digest
