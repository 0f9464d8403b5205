//! Words people use for the same action or thing, so that "remove" finds a `delete_file`
//! and "ticket" an issue tracker's `create_issue`. A query's word brings the other words
//! of its group at a lower weight ([`WEIGHT`]); a tool's text is indexed as written.
//!
//! The groups are general English of software tools, written once from what tools do
//! (not from any query set), and kept short: a word in two senses ("open" a file, "open"
//! an issue) is in no group.

use std::collections::HashMap;
use std::sync::OnceLock;

/// A synonym's weight against the query's own word (1).
pub(crate) const WEIGHT: f32 = 0.4;
/// The weight of the English word a query's word in another language stands for.
pub(crate) const TRANSLATED_WEIGHT: f32 = 0.8;

/// Each group: phrases of one or more words. A query word equal to a one-word phrase of
/// a group brings every term of the group's other phrases.
const GROUPS: &[&[&str]] = &[
    &[
        "delete", "remove", "erase", "rm", "destroy", "trash", "unlink",
    ],
    &["create", "make", "add", "new", "insert", "generate"],
    &[
        "search", "find", "lookup", "locate", "query", "grep", "seek",
    ],
    &["get", "fetch", "retrieve", "download", "obtain", "pull"],
    &["list", "enumerate", "ls", "show", "display"],
    &[
        "edit", "modify", "change", "update", "alter", "patch", "replace",
    ],
    &["read", "view", "load", "cat", "inspect"],
    &["write", "save", "store", "persist"],
    &["run", "execute", "exec", "launch", "invoke", "start"],
    &["stop", "kill", "terminate", "cancel", "abort", "end"],
    &["move", "rename", "mv", "relocate"],
    &["copy", "duplicate", "cp", "clone"],
    &["folder", "directory", "dir"],
    &["issue", "ticket", "bug"],
    &["pr", "pull request", "merge request", "mr"],
    &["repo", "repository", "project"],
    &["screenshot", "screen capture", "screengrab"],
    &[
        "web", "website", "site", "page", "webpage", "url", "link", "http",
    ],
    &["message", "msg", "chat", "dm"],
    &["email", "mail", "e-mail"],
    &["image", "picture", "photo", "img", "pic"],
    &["navigate", "visit", "browse", "goto", "go"],
    &["click", "press", "tap"],
    &["type", "enter", "fill", "input"],
    &["user", "account", "member", "person", "people", "profile"],
    &["channel", "room", "conversation"],
    &["database", "db", "sql"],
    &["kubernetes", "k8s", "kube", "kubectl"],
    &["container", "pod", "docker"],
    &["time", "clock", "hour", "timezone"],
    &["log", "logs", "history"],
    &["commit", "changeset", "revision"],
    &["diff", "difference", "changes", "changed"],
    &["error", "exception", "crash", "failure", "fail"],
    &["summarize", "summary", "tldr", "digest"],
    &["location", "place", "address", "map"],
    &[
        "route",
        "direction",
        "directions",
        "distance",
        "far",
        "travel",
        "trip",
    ],
    &[
        "note",
        "memo",
        "remember",
        "memory",
        "recall",
        "knowledge",
        "fact",
    ],
    &["wait", "sleep", "pause", "delay"],
    &["payment", "charge", "pay", "invoice", "billing"],
    &["customer", "client"],
    &["document", "doc", "docs", "documentation"],
    &["text", "string", "content", "contents"],
    &["elevation", "altitude", "height", "high", "sea level"],
    &["command", "terminal", "shell", "process", "script", "cli"],
    &["evaluate", "javascript", "js", "eval", "script"],
    &["network", "request", "xhr", "traffic", "api call"],
    &[
        "status",
        "state",
        "modified",
        "working tree",
        "working copy",
    ],
    &[
        "describe",
        "details",
        "detail",
        "info",
        "information",
        "events",
    ],
    &["size", "length", "count", "bytes"],
];

/// A tool's own words for what people ask in other languages: each English word (as
/// tools are described) with its common forms in German, French, Spanish, Portuguese,
/// Italian, Russian, Japanese, Chinese and Korean. Words are separated by spaces; `+`
/// joins a phrase's words. A query's word (or, for a script without spaces and for a
/// phrase, its text) brings the English word at full weight and that word's synonyms.
const GLOSSARY: &[(&str, &str)] = &[
    (
        "file",
        "datei dateien fichier fichiers archivo archivos arquivo arquivos файл файлы файла файлов ファイル 文件 파일",
    ),
    (
        "folder",
        "ordner verzeichnis dossier répertoire carpeta directorio pasta diretório cartella папка папку папке каталог директория フォルダ ディレクトリ 文件夹 目录 폴더 디렉터리",
    ),
    (
        "delete",
        "löschen lösche entferne entfernen supprimer supprime effacer efface borrar borra eliminar elimina apagar apaga excluir exclui remover cancellare cancella eliminare удалить удали удалите 削除 删除 삭제",
    ),
    (
        "search",
        "suchen suche finden finde chercher cherche rechercher recherche trouver trouve buscar busca encontrar encuentra procurar procura cercare cerca trovare trova найти найди поиск искать ищи 検索 探して 探す 搜索 查找 寻找 找 검색 찾",
    ),
    (
        "show",
        "zeigen zeige zeig anzeigen afficher affiche montrer montre mostrar muestra mostra mostrare mostrami покажи показать 表示 見せて 显示 查看 看 보여",
    ),
    (
        "read",
        "lesen lies lire lis leer lee ler leggere leggi прочитай прочитать прочти 読 读取 读 읽",
    ),
    (
        "write",
        "schreiben schreibe speichern speichere écrire écris enregistrer enregistre escribir escribe guardar guarda escrever salvar salva scrivere scrivi salvare записать запиши сохрани сохранить 書 保存 写 저장",
    ),
    (
        "create",
        "erstellen erstelle anlegen lege créer crée crear crea criar cria creare создать создай создайте 作成 作って 创建 新建 만들 생성",
    ),
    (
        "new",
        "neu neue neuen neues nouveau nouvelle nuevo nueva novo nova nuovo nuova новый новую новое 新しい 新 새",
    ),
    (
        "list",
        "liste auflisten lister listar lista elenca elenco список перечисли 一覧 リスト 列出 列表 목록",
    ),
    (
        "time",
        "zeit uhrzeit spät heure hora horas время 時間 時刻 何時 时间 几点 시간",
    ),
    (
        "directions",
        "route wegbeschreibung itinéraire trajet ruta cómo+llegar rota caminho percorso маршрут ルート 経路 行き方 路线 怎么走 경로 길찾기",
    ),
    (
        "distance",
        "entfernung distance distancia distância distanza расстояние 距離 距离 거리",
    ),
    (
        "elevation",
        "höhe altitude altitud altitudine высота 標高 海拔 고도",
    ),
    (
        "address",
        "adresse dirección endereço indirizzo адрес 住所 地址 주소",
    ),
    (
        "commit",
        "commits коммит коммиты коммитов コミット 提交 커밋",
    ),
    (
        "history",
        "verlauf historie historique historial histórico cronologia история 履歴 历史 기록",
    ),
    (
        "log",
        "protokoll journal registro журнал логи ログ 日志 로그",
    ),
    (
        "page",
        "seite webseite página pagina страница страницу сайт ページ サイト 页面 网页 网站 페이지 웹",
    ),
    (
        "message",
        "nachricht nachrichten mensaje mensajes mensagem mensagens messaggio messaggi сообщение сообщения メッセージ 消息 메시지",
    ),
    (
        "send",
        "senden sende schicke schicken envoyer envoie enviar envía envia manda inviare invia отправь отправить 送信 送って 发送 发 보내",
    ),
    (
        "screenshot",
        "bildschirmfoto capture+d'écran captura+de+pantalla captura+de+tela schermata скриншот снимок+экрана スクリーンショット 截图 截屏 스크린샷",
    ),
    (
        "image",
        "bild bilder imagen imagem immagine изображение картинку картинка 画像 图片 图像 이미지",
    ),
    (
        "database",
        "datenbank base+de+données base+de+datos banco+de+dados база+данных базе+данных データベース 数据库 데이터베이스",
    ),
    (
        "table",
        "tabelle tabellen tableau tabla tablas tabela tabelas tabella tabelle таблица таблицы таблицу テーブル 表 테이블",
    ),
    (
        "issue",
        "fehler ticket bogue problème incidencia problema erro errore задача ошибка баг 課題 バグ 问题 缺陷 이슈 버그",
    ),
    (
        "branch",
        "zweig branche rama ramo ветка ветку ブランチ 分支 브랜치",
    ),
    (
        "documentation",
        "dokumentation documentación documentação documentazione документация документацию ドキュメント 文档 문서",
    ),
    ("drive", "ドライブ 云端硬盘 网盘 드라이브"),
    (
        "repository",
        "repositorio repositório репозиторий репозитории репозитория リポジトリ 仓库 저장소 리포지토리",
    ),
    (
        "run",
        "ausführen führe starte exécuter exécute lancer lance ejecutar ejecuta executar executa rodar roda eseguire esegui запусти запустить выполни 実行 运行 执行 실행",
    ),
    (
        "user",
        "benutzer nutzer utilisateur usuario usuário utente пользователь пользователи ユーザー 用户 사용자",
    ),
    ("channel", "kanal canal canale канал チャンネル 频道 채널"),
    (
        "todo",
        "aufgabe aufgaben tâche tâches tarea tareas tarefa tarefas attività compito задачу задачи タスク やること 任务 待办 할+일",
    ),
    (
        "email",
        "courriel correo correio posta письмо почта письма メール 邮件 이메일 메일",
    ),
    (
        "convert",
        "konvertieren umwandeln convertir convertis convierte converter converte convertire converti конвертировать конвертируй преобразуй 変換 转换 변환",
    ),
    (
        "download",
        "herunterladen télécharger descargar descarga baixar scaricare scarica скачать скачай ダウンロード 下载 다운로드",
    ),
    (
        "fetch",
        "abrufen récupérer obtener obter recuperare получить получи 取得 获取 가져",
    ),
    ("weather", "wetter météo clima tempo погода 天気 天气 날씨"),
];

/// [`GLOSSARY`] read once: single words (stemmed) to their English terms, and the
/// phrases and words of scripts without spaces, matched in a query's text.
struct Glossary {
    words: HashMap<String, Vec<String>>,
    phrases: Vec<(String, Vec<String>)>,
}

fn glossary() -> &'static Glossary {
    static GLOSSARY_READ: OnceLock<Glossary> = OnceLock::new();
    GLOSSARY_READ.get_or_init(|| {
        let mut g = Glossary {
            words: HashMap::new(),
            phrases: Vec::new(),
        };
        for (english, words) in GLOSSARY {
            let terms = raw_terms(english);
            for w in words.split(' ') {
                // One character of a script without spaces is part of too many words.
                if w.chars().count() == 1 && w.chars().all(super::words::is_dense) {
                    continue;
                }
                if w.contains('+') || w.chars().any(super::words::is_dense) {
                    g.phrases.push((w.replace('+', " "), terms.clone()));
                } else {
                    let mut t = w.to_owned();
                    super::words::stem(&mut t);
                    g.words.entry(t).or_default().extend(terms.iter().cloned());
                }
            }
        }
        g
    })
}

/// The English terms (stemmed) that `query`'s foreign words stand for ([`GLOSSARY`]):
/// `terms` are the query's terms, `lower` its text lowercased.
pub(crate) fn translated(lower: &str, terms: &[String]) -> Vec<String> {
    let g = glossary();
    let mut out: Vec<String> = Vec::new();
    let mut add = |ts: &[String]| {
        for t in ts {
            if !out.contains(t) {
                out.push(t.clone());
            }
        }
    };
    for t in terms {
        if let Some(english) = g.words.get(t) {
            add(english);
        }
    }
    if !lower.is_ascii() || lower.contains(' ') {
        for (phrase, english) in &g.phrases {
            if lower.contains(phrase.as_str()) {
                add(english);
            }
        }
    }
    out
}

/// Each query term's synonyms' terms (stemmed, as indexed), built once.
fn table() -> &'static HashMap<String, Vec<String>> {
    static TABLE: OnceLock<HashMap<String, Vec<String>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut map: HashMap<String, Vec<String>> = HashMap::new();
        for group in GROUPS {
            let phrases: Vec<Vec<String>> = group.iter().map(|p| raw_terms(p)).collect();
            for (i, own) in phrases.iter().enumerate() {
                let [word] = own.as_slice() else { continue };
                let entry = map.entry(word.clone()).or_default();
                for (j, other) in phrases.iter().enumerate() {
                    for t in other {
                        if j != i && t != word && !entry.contains(t) {
                            entry.push(t.clone());
                        }
                    }
                }
            }
        }
        map
    })
}

/// A phrase's terms as the tokenizer makes them, stop words kept ("go" and "end" are
/// words here).
fn raw_terms(phrase: &str) -> Vec<String> {
    phrase
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut t = w.to_lowercase();
            super::words::stem(&mut t);
            t
        })
        .collect()
}

/// The synonyms' terms of query term `term` (already stemmed), none when it is in no group.
pub(crate) fn of(term: &str) -> &'static [String] {
    table().get(term).map(Vec::as_slice).unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_word_brings_its_group_stemmed() {
        let s = of("remov");
        assert!(s.contains(&"delet".to_owned()), "{s:?}");
        assert!(!s.contains(&"remov".to_owned()));
        let pr = of("pr");
        assert!(pr.contains(&"pull".to_owned()) && pr.contains(&"request".to_owned()));
        assert!(of("zebra").is_empty());
    }

    #[test]
    fn other_languages_words_bring_the_english_ones() {
        let t = |q: &str| translated(&q.to_lowercase(), &super::super::words::term_list(q));
        assert_eq!(t("Datei löschen"), ["file", "delet"]);
        assert_eq!(t("ファイルを削除"), ["file", "delet"]);
        assert_eq!(t("busca en la base de datos"), ["search", "databas"]);
        assert!(t("nothing foreign here").is_empty());
    }

    #[test]
    fn every_group_word_is_a_term_the_tokenizer_makes() {
        for group in GROUPS {
            for phrase in *group {
                for w in raw_terms(phrase) {
                    assert!(!w.is_empty(), "{phrase}");
                }
            }
        }
    }
}
