"""Templates are user-supplied text (constitution files, ``--template`` paths): rendering one must not run code.

Each payload would create a marker file if the template could reach ``subprocess.Popen`` or ``os.popen``;
the tests assert that the marker never appears and that the failure says what was refused.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import jinja2
import pytest

from rewardsmith.constitutions.judging import comparison_template
from rewardsmith.constitutions.loader import parse_text
from rewardsmith.constitutions.revise import RevisePipeline, check_revision_templates, critique_messages
from rewardsmith.constitutions.schema import ConstitutionError
from rewardsmith.judges.clients.function import FunctionClient
from rewardsmith.judges.pairwise import PairwiseJudge
from rewardsmith.judges.templates import (
    TemplateError,
    UnsafeTemplateError,
    check_source,
    render_messages,
    render_source,
    unsafe_accesses,
)


def popen_walk(variable: str, marker: Path) -> str:
    """The reported exploit: from a string variable up to ``object``, then down to ``Popen``."""
    return (
        f"{{% for c in {variable}.__class__.__mro__[1].__subclasses__() %}}"
        f"{{% if c.__name__ == 'Popen' %}}{{{{ c(['touch', '{marker}']).wait() }}}}{{% endif %}}{{% endfor %}}"
    )


def payloads(marker: Path) -> dict[str, str]:
    return {
        "mro-subclasses": popen_walk("critique_request", marker) + "{{ critique_request }}",
        "globals-os-popen": f"{{{{ cycler.__init__.__globals__.os.popen('touch {marker}').read() }}}}"
        "{{ critique_request }}",
        "attr-filter": popen_walk("critique_request", marker).replace(
            "critique_request.__class__", "(critique_request|attr('__class__'))"
        )
        + "{{ critique_request }}",
        "subscript": popen_walk("critique_request", marker).replace(
            "critique_request.__class__", "critique_request['__class__']"
        )
        + "{{ critique_request }}",
    }


def answers_a() -> FunctionClient:
    """A chat client that answers every request with "A" and keeps the requests (none should be sent here)."""
    return FunctionClient(lambda messages, params: "A", model="echo")


def constitution_with(kind: str, template: str, *, refused_at_load: bool = True):
    """A constitution carrying ``template``, past load-time validation (which refuses unsafe ones first).

    The pipelines keep their own check, so a constitution built in code rather than loaded is covered too.
    """
    import yaml

    text = f"""
name: hostile
description: A constitution whose template tries to run a command.
principles:
  - {{id: p1, comparison: "Which is better?", critique: "Critique it.", revision: "Revise it."}}
templates:
  {kind}: {yaml.safe_dump(template, default_style='"', width=10_000).strip()}
"""
    if not refused_at_load:
        return parse_text(text, "hostile.yaml")
    with pytest.raises(ConstitutionError, match=f"{kind} template accesses private attributes"):
        parse_text(text, "hostile.yaml")
    safe = parse_text(text.split("templates:")[0], "hostile.yaml")
    return safe.model_copy(update={"templates": safe.templates.model_copy(update={kind: template})})


def test_the_payload_is_live_in_a_plain_jinja_environment(tmp_path):
    # Guards the other tests: the payload really runs a command when nothing stops it.
    marker = tmp_path / "ran"
    jinja2.Environment().from_string(payloads(marker)["mro-subclasses"]).render(critique_request="x")
    assert marker.exists()


@pytest.mark.parametrize("payload", ["mro-subclasses", "globals-os-popen", "attr-filter", "subscript"])
def test_sandbox_refuses_payload(tmp_path, payload):
    marker = tmp_path / "ran"
    source = payloads(marker)[payload]
    with pytest.raises(UnsafeTemplateError, match="unsafe access"):
        render_source(source, name="critique template", critique_request="Critique it.")
    assert not marker.exists()
    assert unsafe_accesses(source)  # named up front, so validation rejects it without rendering
    with pytest.raises(UnsafeTemplateError, match="private attributes"):
        check_source(source, critique_request="Critique it.")
    assert not marker.exists()


def test_attribute_names_built_at_render_time_are_refused_by_the_sandbox(tmp_path):
    marker = tmp_path / "ran"
    source = (
        "{% set u = '_' ~ '_' %}"
        "{% for c in ((((prompt|attr(u ~ 'class' ~ u))|attr(u ~ 'mro' ~ u))[1])|attr(u ~ 'subclasses' ~ u))() %}"
        f"{{% if (c|attr(u ~ 'name' ~ u)) == 'Popen' %}}{{{{ c(['touch', '{marker}']).wait() }}}}{{% endif %}}"
        "{% endfor %}"
    )
    assert unsafe_accesses(source) == []  # invisible to the static check ...
    jinja2.Environment().from_string(source).render(prompt="x")
    assert marker.exists()  # ... and live without the sandbox
    marker.unlink()
    with pytest.raises(UnsafeTemplateError, match="unsafe access"):
        render_source(source, prompt="x")
    assert not marker.exists()


def test_templates_cannot_mutate_their_variables():
    candidates = ["one", "two"]
    with pytest.raises(UnsafeTemplateError):
        render_source("{{ candidates.append('three') }}", candidates=candidates)
    assert candidates == ["one", "two"]


def test_ordinary_template_features_still_render():
    source = "{{ prompt | upper }}{% for c in items %} {{ loop.index }}={{ c }}{% endfor %} {{ '%s!' % prompt }}"
    assert render_source(source, prompt="hi", items=["a", "b"]) == "HI 1=a 2=b hi!"
    with pytest.raises(TemplateError, match="undefined"):
        render_source("{{ missing }}")


def test_constitution_critique_payload_never_runs(tmp_path):
    marker = tmp_path / "ran"
    constitution = constitution_with("critique", payloads(marker)["mro-subclasses"])
    principle = constitution.principles[0]
    prompt = [{"role": "user", "content": "2+2?"}]
    with pytest.raises(UnsafeTemplateError, match="critique template"):
        critique_messages(constitution, principle, prompt, "5", few_shot=False)
    with pytest.raises(UnsafeTemplateError, match="critique template of constitution 'hostile'"):
        RevisePipeline(answers_a(), constitution)
    assert not marker.exists()


def test_payload_hidden_behind_a_condition_is_rejected_before_any_request(tmp_path):
    marker = tmp_path / "ran"
    hidden = "{% if prompt == 'trigger' %}" + popen_walk("prompt", marker) + "{% endif %}{{ revision_request }}"
    constitution = constitution_with("revision", hidden)
    with pytest.raises(UnsafeTemplateError, match="revision template"):
        check_revision_templates(constitution)
    with pytest.raises(UnsafeTemplateError):  # and if it were rendered with the triggering value anyway
        render_source(hidden, revision_request="r", prompt="trigger")
    assert not marker.exists()


def test_constitution_comparison_payload_never_runs(tmp_path):
    marker = tmp_path / "ran"
    source = "[user]\n" + popen_walk("prompt", marker) + "{{ prompt }} {{ first }} {{ second }} {{ question }}"
    constitution = constitution_with("comparison", source)
    with pytest.raises(UnsafeTemplateError, match="comparison template"):
        comparison_template(constitution, None, chain_of_thought=False, state_dir=tmp_path / "state")
    assert not marker.exists()


def test_judge_template_file_payload_never_runs(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "evil.jinja"
    path.write_text("[user]\n{{ prompt }} {{ first }} {{ second }}" + popen_walk("prompt", marker))
    client = answers_a()
    with pytest.raises(UnsafeTemplateError):
        PairwiseJudge(client, template=str(path))
    with pytest.raises(UnsafeTemplateError, match=r"evil\.jinja.*unsafe access"):
        render_messages(str(path), prompt="p", first="a", second="b", question=None)
    assert not marker.exists()
    assert len(client.requests) == 0


def test_revise_pipeline_runs_with_safe_overrides(tmp_path):
    from rewardsmith.constitutions.prompts import PromptItem
    from rewardsmith.store import KeyedStore

    constitution = constitution_with(
        "critique", "{{ critique_request | upper }} ({{ response | length }} chars)", refused_at_load=False
    )
    client = answers_a()
    pipeline = RevisePipeline(client, constitution)
    item = PromptItem(index=0, prompt_id="p0", prompt="2+2?", candidates=("5",))
    summary = asyncio.run(pipeline.arun([item], KeyedStore(tmp_path / "store.jsonl")))
    assert summary.responses_total == 1 and len(client.requests) == 2
