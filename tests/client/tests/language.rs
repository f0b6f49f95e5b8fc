//! Languages through a driver (docs/api.md "Languages"): what a model or a user can put in the
//! `language` field is refused whole (22023, nothing written), a tenant's default changed by
//! parallel sessions ends as one row, writes in eight languages record theirs, and keyword
//! search finds each in its own.

use memory_ext_client_tests::{call, sqlstate, tenant_session};
use serde_json::json;
use std::thread;

#[test]
fn hostile_languages_are_refused_and_nothing_is_written() {
    let (mut c, tenant) = tenant_session("me_app", "lang-hostile");
    let long = "d".repeat(10_000);
    for bad in [
        "",
        "d",
        "deu",
        "german",
        "de'; DROP TABLE memory.items; --",
        "ＤＥ",
        "dé",
        "12",
        &long,
        "de\u{200b}",
        "<script>",
        "\u{202e}ed",
    ] {
        let e = c
            .query_one(
                "SELECT memory_write($1)",
                &[&postgres::types::Json(
                    json!({"text": "Ich wohne in Lissabon.", "language": bad}),
                )],
            )
            .unwrap_err();
        assert_eq!(
            sqlstate(&e),
            "22023",
            "memory_write with language {bad:?}: {e}"
        );
        let e = c
            .query_one(
                "SELECT memory_configure($1)",
                &[&postgres::types::Json(json!({"language": bad}))],
            )
            .unwrap_err();
        assert_eq!(
            sqlstate(&e),
            "22023",
            "memory_configure with language {bad:?}: {e}"
        );
    }
    for bad in [json!(7), json!(["de"]), json!({"code": "de"}), json!(true)] {
        let e = c
            .query_one(
                "SELECT memory_write($1)",
                &[&postgres::types::Json(
                    json!({"text": "x", "language": bad}),
                )],
            )
            .unwrap_err();
        assert_eq!(sqlstate(&e), "22023", "{bad}");
    }
    let n: i64 = c
        .query_one(
            "SELECT count(*) FROM memory.items WHERE user_id = $1",
            &[&tenant],
        )
        .unwrap()
        .get(0);
    let s: i64 = c
        .query_one(
            "SELECT count(*) FROM memory.settings WHERE user_id = $1",
            &[&tenant],
        )
        .unwrap()
        .get(0);
    assert_eq!((n, s), (0, 0), "something was written");
}

#[test]
fn parallel_defaults_end_as_one_setting() {
    let (mut c, tenant) = tenant_session("me_app", "lang-parallel");
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let tenant = tenant.clone();
            thread::spawn(move || {
                let mut c = memory_ext_client_tests::connect_as("me_app");
                c.batch_execute(&format!("SET memory_ext.user_id = '{tenant}'"))
                    .unwrap();
                for j in 0..10 {
                    let lang = if (i + j) % 2 == 0 { "de" } else { "fr" };
                    call(&mut c, "memory_configure", json!({"language": lang}));
                    call(
                        &mut c,
                        "memory_write",
                        json!({"text": format!("kurz {i} {j}")}),
                    );
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let rows: Vec<(String,)> = c
        .query(
            "SELECT language FROM memory.settings WHERE user_id = $1",
            &[&tenant],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0),))
        .collect();
    assert_eq!(rows.len(), 1);
    assert!(rows[0].0 == "de" || rows[0].0 == "fr");
    // Every short write took a default (or the tenant's usual language), none is unknown.
    let unknown: i64 = c
        .query_one(
            "SELECT count(*) FROM memory.items WHERE user_id = $1 AND language IS NULL",
            &[&tenant],
        )
        .unwrap()
        .get(0);
    assert_eq!(unknown, 0);
}

#[test]
fn eight_languages_are_recorded_and_found_in_their_own() {
    let (mut c, _tenant) = tenant_session("me_app", "lang-eight");
    let cases = [
        (
            "de",
            "Meine Großmutter wohnte viele Jahre in einem kleinen Dorf in Bayern.",
            "Wo hat die Großmutter gewohnt?",
        ),
        (
            "fr",
            "Ma sœur travaille comme infirmière dans un grand hôpital à Marseille.",
            "Où travaillent les infirmières de l'hôpital ?",
        ),
        (
            "es",
            "Mi hermano estudia arquitectura en la universidad de Barcelona desde el año pasado.",
            "¿Qué estudiaba su hermano en la universidad?",
        ),
        (
            "pt",
            "O meu pai cozinha bacalhau para toda a família todos os domingos de manhã.",
            "Quem cozinhava o bacalhau para a família?",
        ),
        (
            "ru",
            "Мой друг играет на скрипке в городском оркестре уже десять лет.",
            "Кто играл на скрипке в оркестре?",
        ),
        ("zh", "我的女儿每天早上在公园里跑步。", "女儿在公园跑步"),
        (
            "ja",
            "父は毎朝駅の近くのパン屋でコーヒーを飲んでいます。",
            "パン屋でコーヒー",
        ),
        (
            "ar",
            "تعمل أختي مهندسة في شركة كبيرة في دبي منذ ثلاث سنوات.",
            "أختي مهندسة في دبي",
        ),
    ];
    for (_, text, _) in &cases {
        call(&mut c, "memory_write", json!({"text": text}));
    }
    for (lang, text, query) in &cases {
        let got: Option<String> = c
            .query_one("SELECT language FROM memory.items WHERE text = $1", &[text])
            .unwrap()
            .get(0);
        assert_eq!(got.as_deref(), Some(*lang), "{text}");
        // The keyword side alone (every other signal weighed 0) finds it first.
        c.batch_execute(
            "SET memory_ext.rank_weights = '{\"vector\": 0, \"hop1\": 0, \"hop2\": 0, \"thread\": 0, \"actor\": 0, \"entity\": 0, \"time\": 0, \"importance\": 0, \"pinned\": 0, \"recency\": 0}'",
        )
        .unwrap();
        let r = call(&mut c, "memory_query", json!({"query": query, "top_k": 1}));
        c.batch_execute("RESET memory_ext.rank_weights").unwrap();
        let first = r["items"][0]["text"].as_str().unwrap_or("");
        assert!(first.ends_with(text), "{lang}: {query:?} found {first:?}");
    }
}
