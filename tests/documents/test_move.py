"""Link rewriting on a move (A10 and A14 `documents/scope.test` "moving a note")."""

from __future__ import annotations

import pytest

from ragdown.documents.move import LinkRewrite, moved_path, plan_move

INDEX = "\n".join(
    [
        "# Index",
        "",
        "[[ops/pg#Vacuum|vacuum]], [[pg]], ![[pg.md]] and [pg](ops/pg.md).",
        "`[[pg]]` stays, [[missing]] too.",
    ]
)


@pytest.fixture
def folder() -> dict[str, str]:
    return {
        "ops/pg.md": "# Postgres\n\nSee [[kafka]] and [runbook](../run/book.md).",
        "kafka.md": "# Kafka",
        "run/book.md": "# Book",
        "index.md": INDEX,
        "other/pg.md": "# Another pg",
    }


def test_rewrites_the_links_to_the_moved_document(folder: dict[str, str]) -> None:
    assert plan_move(folder, {"ops/pg.md": "db/postgres.md"}) == [
        LinkRewrite(
            "index.md",
            "index.md",
            "\n".join(
                [
                    "# Index",
                    "",
                    "[[postgres#Vacuum|vacuum]], [[postgres]], ![[postgres.md]] and [pg](db/postgres.md).",
                    "`[[pg]]` stays, [[missing]] too.",
                ]
            ),
        )
    ]


def test_keeps_as_much_of_the_path_as_the_new_name_needs(folder: dict[str, str]) -> None:
    rewrites = {r.path: r for r in plan_move(folder, {"ops/pg.md": "db/deep/book.md"})}
    assert set(rewrites) == {"index.md", "ops/pg.md"}
    assert (
        "[[deep/book#Vacuum|vacuum]], [[deep/book]], ![[deep/book.md]] and [pg](db/deep/book.md)."
        in rewrites["index.md"].text
    )
    assert rewrites["ops/pg.md"] == LinkRewrite(
        "ops/pg.md", "db/deep/book.md", "# Postgres\n\nSee [[kafka]] and [runbook](../../run/book.md)."
    )


def test_moves_a_subfolder_fixing_links_into_out_of_and_inside_it(folder: dict[str, str]) -> None:
    folder["ops/tuning.md"] = "# Tuning\n\n![[pg.png]], [pg](pg.md) and [[book]]."
    folder["gallery.md"] = "![chart](ops/pg.png)"
    rewrites = plan_move(folder, {"ops": "db/main"}, attachments=["ops/pg.png"])
    assert [(r.path, r.new_path) for r in rewrites] == [
        ("gallery.md", "gallery.md"),
        ("index.md", "index.md"),
        ("ops/pg.md", "db/main/pg.md"),
    ]
    by_path = {r.path: r.text for r in rewrites}
    assert (
        "[[main/pg#Vacuum|vacuum]], [[main/pg]], ![[main/pg.md]] and [pg](db/main/pg.md)."
        in by_path["index.md"]
    )
    assert by_path["gallery.md"] == "![chart](db/main/pg.png)"
    assert by_path["ops/pg.md"] == "# Postgres\n\nSee [[kafka]] and [runbook](../../run/book.md)."


def test_renames_then_moves_the_folder_like_the_mcp_test() -> None:
    docs = {
        "ops/backups.md": "# Backups\n\n## Restore\n\nRun it.",
        "index.md": "# Index\n\nSee [[backups#Restore]] and [backups](ops/backups.md).",
    }
    [renamed] = plan_move(docs, {"ops/backups.md": "ops/snapshots.md"})
    assert renamed.text == "# Index\n\nSee [[snapshots#Restore]] and [backups](ops/snapshots.md)."
    docs = {"ops/snapshots.md": docs["ops/backups.md"], "index.md": renamed.text}
    [moved] = plan_move(docs, {"ops": "infra/db"})
    assert moved.text == "# Index\n\nSee [[snapshots#Restore]] and [backups](infra/db/snapshots.md)."


def test_aliases_keep_resolving_and_are_left_alone() -> None:
    docs = {"ops/restore.md": "# Restore", "a.md": "See [[DR|disaster recovery]] and [[restore]]."}
    [rewrite] = plan_move(docs, {"ops/restore.md": "dr/runbook.md"}, aliases={"ops/restore.md": ["DR"]})
    assert rewrite.text == "See [[DR|disaster recovery]] and [[runbook]]."


def test_keeps_crlf_bom_and_encodes_markdown_targets() -> None:
    docs = {
        "a.md": "\ufeff# A\r\n\r\n[x](b.md) and [[b]]\r\n[y](b.md#Part)\r\n",
        "b.md": "# B",
    }
    [rewrite] = plan_move(docs, {"b.md": "new dir/B (v2).md"})
    assert rewrite.text == (
        "\ufeff# A\r\n\r\n[x](new%20dir/B%20%28v2%29.md) and [[B (v2)]]\r\n[y](new%20dir/B%20%28v2%29.md#Part)\r\n"
    )


def test_escaped_table_pipes_and_embeds_of_attachments() -> None:
    docs = {"t.md": "| [[pg\\|Postgres]] | ![[img.png]] |", "pg.md": "x"}
    [rewrite] = plan_move(docs, {"pg.md": "db/pg2.md", "img.png": "assets/img.png"}, attachments=["img.png"])
    assert rewrite.text == "| [[pg2\\|Postgres]] | ![[img.png]] |"


def test_moved_path_follows_files_and_directories() -> None:
    moves = {"ops": "db/main", "x.md": "y.md"}
    assert moved_path("ops/a/b.md", moves) == "db/main/a/b.md"
    assert moved_path("ops", moves) == "db/main"
    assert moved_path("opsx/a.md", moves) == "opsx/a.md"
    assert moved_path("x.md", moves) == "y.md"
    assert moved_path("z.md", moves) == "z.md"
