use std::path::Path;

use super::*;

/// A tool from its frontmatter lines (after `name`) and docs.
fn tool(name: &str, front: &str, docs: &str) -> ToolInfo {
    let md = format!("---\nname: {name}\n{front}\n---\n{docs}\n");
    let opts = toolbind_codegen::Options::default().require_entry(false);
    let dir = Path::new("/t").join(name);
    toolbind_codegen::parse_tool_md(&dir.join("TOOL.md"), &dir, md.as_bytes(), &opts)
        .unwrap_or_else(|d| panic!("{d:?}"))
        .into()
}

fn registry(tools: impl IntoIterator<Item = ToolInfo>) -> Registry {
    let mut r = Registry::new();
    for t in tools {
        r.insert(t).unwrap();
    }
    r
}

fn catalog() -> Vec<ToolInfo> {
    vec![
        tool(
            "web_fetch",
            "description: Fetch one URL and return its content as readable text\n\
             inputs:\n  url:\n    type: string\n    description: the page's address",
            "Downloads a page over HTTP and converts its HTML to Markdown.",
        ),
        tool(
            "delete_file",
            "description: Delete a file from the workspace\n\
             inputs:\n  path:\n    type: string\n    description: the file",
            "",
        ),
        tool(
            "read_file",
            "description: Read a text file and return its lines\n\
             inputs:\n  path:\n    type: string\n    description: the file",
            "",
        ),
        tool(
            "todo",
            "label: Todo List\ndescription: Manage the session's todo list\n\
             inputs:\n  action:\n    type: enum\n    values: list,add,done\n    description: what to do",
            "Plan multi-step work and track what is left.",
        ),
        tool("translate", "description: 翻訳する テキストを日本語に", ""),
    ]
}

fn names(hits: &[Hit]) -> Vec<&str> {
    hits.iter().map(|h| h.name.as_str()).collect()
}

#[test]
fn the_tool_that_does_what_is_asked_comes_first() {
    let index = ToolIndex::build(&registry(catalog()));
    let first = |q: &str| index.search(q, 3).unwrap()[0].name.clone();
    assert_eq!(first("download a web page as markdown"), "web_fetch");
    assert_eq!(first("read the lines of a text file"), "read_file");
    // A synonym: "remove" for "delete".
    assert_eq!(first("remove a file"), "delete_file");
    // An input's allowed value and a label.
    assert_eq!(first("add an item to my todo list"), "todo");
    // Words of a script written without spaces.
    assert_eq!(first("日本語に翻訳"), "translate");
    // Another language's common words for what tools do.
    assert_eq!(first("удалить файл"), "delete_file");
    assert_eq!(first("Datei löschen"), "delete_file");
    assert_eq!(first("ファイルを削除して"), "delete_file");
}

#[test]
fn a_query_that_is_a_tools_name_puts_it_first() {
    let index = ToolIndex::build(&registry(catalog()));
    let hits = index.search("read_file", 5).unwrap();
    assert_eq!(hits[0].name, "read_file");
    assert!(hits[0].score > hits[1].score);
    // Even a name that has no word of its own ("todo" is a word, so try an odd one).
    let odd = ToolIndex::build(&registry([tool("x_1", "description: d", "")]));
    assert_eq!(names(&odd.search("x_1", 5).unwrap()), ["x_1"]);
}

#[test]
fn the_ranking_is_the_same_whatever_the_order_tools_came_in() {
    let forward = ToolIndex::build(&registry(catalog()));
    let backward = ToolIndex::build(&registry(catalog().into_iter().rev()));
    for q in ["file", "a file on the web", "todo", "list"] {
        let a = forward.search(q, 10).unwrap();
        let b = backward.search(q, 10).unwrap();
        assert_eq!(names(&a), names(&b), "{q}");
    }
    // Equal scores: by name.
    let hits = forward.search("path", 10).unwrap();
    assert_eq!(names(&hits), ["delete_file", "read_file"]);
    assert_eq!(hits[0].score, hits[1].score);
}

#[test]
fn bad_queries_get_a_clear_answer() {
    let index = ToolIndex::build(&registry(catalog()));
    assert_eq!(index.search("", 5), Err(QueryError::Empty));
    assert_eq!(index.search(" \n\t ", 5), Err(QueryError::Empty));
    assert_eq!(index.search("the of and?!", 5), Err(QueryError::Empty));
    let long = "file ".repeat(MAX_QUERY_BYTES);
    let e = index.search(&long, 5).unwrap_err();
    assert_eq!(e, QueryError::TooLong { bytes: long.len() });
    assert!(e.to_string().contains("4096"), "{e}");
    assert!(index.search(&long[..MAX_QUERY_BYTES], 5).is_ok());
    // Words no tool has, in a script no tool is written in: nothing, not an error.
    assert!(index.search("διαγραφή αρχείου", 5).unwrap().is_empty());
    assert!(index.search("zebra quokka", 5).unwrap().is_empty());
    assert!(index.search("file", 0).unwrap().is_empty());
    assert!(
        ToolIndex::build(&Registry::new())
            .search("file", 5)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn the_cached_index_is_kept_until_the_list_changes() {
    let cache = Cached::default();
    let tools = catalog();
    let list = registry(tools.clone());
    let a = cache.of(&list);
    assert!(Arc::ptr_eq(&a, &cache.of(&registry(tools.clone()))));
    // The same name, a new description: a new index that finds it.
    let mut changed = tools.clone();
    changed[1] = tool("delete_file", "description: Shred a document", "");
    let b = cache.of(&registry(changed));
    assert!(!Arc::ptr_eq(&a, &b));
    assert_eq!(b.search("shred", 5).unwrap()[0].name, "delete_file");
    // A tool removed.
    let c = cache.of(&registry(tools[..2].to_vec()));
    assert_eq!(c.len(), 2);
}

#[test]
fn a_huge_hostile_tool_costs_no_more_than_its_bounded_text() {
    let docs = "word ".repeat(1_000_000);
    let description = format!("description: \"{}\"", "x".repeat(100_000));
    let index = ToolIndex::build(&registry([tool("big", &description, &docs)]));
    assert_eq!(names(&index.search("word", 5).unwrap()), ["big"]);
}

#[test]
fn one_edit_is_one_letter_or_one_swap() {
    use super::one_edit;
    for (a, b) in [
        ("github", "githb"),
        ("search", "serach"),
        ("delete", "deletes"),
        ("fetch", "fetcj"),
    ] {
        assert!(one_edit(a.as_bytes(), b.as_bytes()), "{a} {b}");
        assert!(one_edit(b.as_bytes(), a.as_bytes()), "{b} {a}");
    }
    for (a, b) in [
        ("github", "github"),
        ("search", "sarech"),
        ("delete", "delet_ed"),
        ("ab", "ba x"),
    ] {
        assert!(!one_edit(a.as_bytes(), b.as_bytes()), "{a} {b}");
    }
}

#[test]
fn a_misspelt_word_still_finds_its_tool() {
    let index = ToolIndex::build(&registry(catalog()));
    assert_eq!(
        index.search("dowload a pgae", 3).unwrap()[0].name,
        "web_fetch"
    );
    assert_eq!(index.search("translaet", 3).unwrap()[0].name, "translate");
}
