//! Text to index terms: one tokenizer for tools and queries alike, so the two meet.
//!
//! Words are runs of letters and digits in any script, split where a name's parts meet
//! (`snake_case`, `kebab-case`, `camelCase`, `HTTPServer`), lowercased, then cut to a stem
//! by a light English stemmer (plurals, `-ed`, `-ing`, a final `e`), so that "files",
//! "file" and "filed" meet. Text in a script written without spaces (Han, kana, Hangul,
//! Thai) becomes overlapping pairs of characters, the usual way to index it without a
//! dictionary. Common English words that say nothing of a tool ("the", "please") are
//! dropped.

/// The longest word kept, in characters; longer runs (a hash, a base64 blob) are cut.
const MAX_WORD: usize = 40;

/// Calls `out` with each term of `text`, in order.
pub(crate) fn terms(text: &str, out: &mut impl FnMut(&str)) {
    let mut buf = String::new();
    let mut dense: Vec<char> = Vec::new();
    let mut run: Option<usize> = None;
    for (at, c) in text.char_indices() {
        if c.is_alphanumeric() && !is_dense(c) {
            if !dense.is_empty() {
                flush_dense(&mut dense, &mut buf, out);
            }
            run.get_or_insert(at);
            continue;
        }
        if let Some(start) = run.take() {
            word(&text[start..at], &mut buf, out);
        }
        if is_dense(c) {
            dense.push(c);
        } else if !dense.is_empty() {
            flush_dense(&mut dense, &mut buf, out);
        }
    }
    if let Some(start) = run {
        word(&text[start..], &mut buf, out);
    }
    flush_dense(&mut dense, &mut buf, out);
}

/// The terms of `text`, collected.
pub(crate) fn term_list(text: &str) -> Vec<String> {
    let mut v = Vec::new();
    terms(text, &mut |t| v.push(t.to_owned()));
    v
}

/// A script written without spaces between words.
pub(crate) fn is_dense(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0E7F        // Thai
        | 0x3040..=0x30FF      // Hiragana, Katakana
        | 0x3400..=0x4DBF      // CJK extension A
        | 0x4E00..=0x9FFF      // CJK unified ideographs
        | 0xAC00..=0xD7AF      // Hangul syllables
        | 0xF900..=0xFAFF      // CJK compatibility ideographs
        | 0x20000..=0x2FA1F) // CJK extensions B and on
}

fn flush_dense(dense: &mut Vec<char>, buf: &mut String, out: &mut impl FnMut(&str)) {
    match dense.len() {
        0 => {}
        1 => {
            buf.clear();
            buf.push(dense[0]);
            out(buf);
        }
        _ => {
            for pair in dense.windows(2) {
                buf.clear();
                buf.extend(pair);
                out(buf);
            }
        }
    }
    dense.clear();
}

/// Splits a run of letters and digits at its name boundaries and emits each part.
fn word(run: &str, buf: &mut String, out: &mut impl FnMut(&str)) {
    if run.is_ascii() && !run.bytes().any(|b| b.is_ascii_uppercase()) {
        emit(run, buf, out);
        return;
    }
    let mut start = 0;
    let mut chars = run.char_indices().peekable();
    let mut prev: Option<char> = None;
    while let Some((at, b)) = chars.next() {
        if let Some(a) = prev {
            let next_lower = chars.peek().is_some_and(|&(_, c)| c.is_lowercase());
            // fooBar | HTTPServer (before the S of Server)
            let boundary = (a.is_lowercase() && b.is_uppercase())
                || (a.is_uppercase() && b.is_uppercase() && next_lower);
            if boundary {
                emit(&run[start..at], buf, out);
                start = at;
            }
        }
        prev = Some(b);
    }
    emit(&run[start..], buf, out);
}

fn emit(part: &str, buf: &mut String, out: &mut impl FnMut(&str)) {
    buf.clear();
    for c in part.chars().take(MAX_WORD) {
        if c.is_ascii() {
            buf.push(c.to_ascii_lowercase());
        } else {
            buf.extend(c.to_lowercase());
        }
    }
    if buf.is_empty() || is_stop(buf) {
        return;
    }
    stem(buf);
    out(buf);
}

/// English words too common to say anything of a tool. Short on purpose: "new", "all",
/// "not" and the like can matter.
fn is_stop(word: &str) -> bool {
    matches!(
        word,
        "a" | "an"
            | "and"
            | "are"
            | "as"
            | "at"
            | "be"
            | "by"
            | "can"
            | "could"
            | "do"
            | "for"
            | "from"
            | "i"
            | "in"
            | "into"
            | "is"
            | "it"
            | "its"
            | "me"
            | "my"
            | "of"
            | "on"
            | "or"
            | "our"
            | "please"
            | "that"
            | "the"
            | "this"
            | "to"
            | "us"
            | "we"
            | "what"
            | "which"
            | "with"
            | "would"
            | "you"
            | "your"
    )
}

/// A light English stemmer: plural and verb endings, then a final `e`, so that "creates",
/// "created", "creating" and "create" share `creat`. Words of other languages and short
/// words pass through unchanged in practice (nothing is cut below three letters).
pub(crate) fn stem(w: &mut String) {
    if !w.is_ascii() || w.len() <= 3 || w.bytes().any(|b| b.is_ascii_digit()) {
        return;
    }
    if w.ends_with("ies") && w.len() >= 5 {
        w.truncate(w.len() - 3);
        w.push('y');
    } else if w.ends_with("sses")
        || w.ends_with("shes")
        || w.ends_with("ches")
        || w.ends_with("xes")
    {
        w.truncate(w.len() - 2);
    } else if w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        w.pop();
    }
    let mut cut = false;
    for suffix in ["ing", "ed"] {
        if let Some(s) = w.strip_suffix(suffix)
            && s.len() >= 3
            && s.bytes().any(is_vowel)
        {
            let n = s.len();
            w.truncate(n);
            cut = true;
            break;
        }
    }
    let b = w.as_bytes();
    let n = b.len();
    if cut && n >= 4 && b[n - 1] == b[n - 2] && !matches!(b[n - 1], b'l' | b's' | b'z') {
        // running -> runn -> run
        w.pop();
    } else if w.ends_with('e') && n > 4 {
        w.pop();
    }
    if w.ends_with('y') && w.len() > 3 && !is_vowel(w.as_bytes()[w.len() - 2]) {
        // copy, copies, copied -> copi
        w.pop();
        w.push('i');
    }
}

fn is_vowel(b: u8) -> bool {
    matches!(b, b'a' | b'e' | b'i' | b'o' | b'u')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stemmed(w: &str) -> String {
        let mut s = w.to_owned();
        stem(&mut s);
        s
    }

    #[test]
    fn names_split_where_their_parts_meet() {
        assert_eq!(term_list("web_fetch"), ["web", "fetch"]);
        assert_eq!(term_list("listPullRequests"), ["list", "pull", "request"]);
        assert_eq!(
            term_list("HTTPServer get-file"),
            ["http", "server", "get", "file"]
        );
        assert_eq!(term_list("s3 ec2 k8s"), ["s3", "ec2", "k8s"]);
    }

    #[test]
    fn word_forms_meet_at_one_stem() {
        for group in [
            ["create", "creates", "created", "creating"],
            ["copy", "copies", "copied", "copying"],
            ["run", "runs", "running", "run"],
            ["file", "files", "file", "files"],
            ["query", "queries", "query", "queries"],
            ["list", "lists", "listed", "listing"],
        ] {
            let stems: Vec<String> = group.iter().map(|w| stemmed(w)).collect();
            assert!(
                stems.iter().all(|s| s == &stems[0]),
                "{group:?} -> {stems:?}"
            );
        }
        assert_eq!(stemmed("status"), "status");
        assert_eq!(stemmed("address"), "address");
        assert_eq!(stemmed("fill"), stemmed("filling"));
    }

    #[test]
    fn other_scripts_are_kept_and_dense_ones_paired() {
        assert_eq!(term_list("Datei löschen"), ["datei", "löschen"]);
        assert_eq!(term_list("Удалить файл"), ["удалить", "файл"]);
        assert_eq!(
            term_list("ファイルを削除"),
            ["ファ", "ァイ", "イル", "ルを", "を削", "削除"]
        );
        assert_eq!(term_list("天"), ["天"]);
    }

    #[test]
    fn stop_words_and_punctuation_say_nothing() {
        assert!(term_list("the of and ... !!!").is_empty());
        assert!(term_list("").is_empty());
    }

    #[test]
    fn a_long_run_is_cut() {
        let long = "x".repeat(10_000);
        assert_eq!(term_list(&long), ["x".repeat(MAX_WORD)]);
    }
}
