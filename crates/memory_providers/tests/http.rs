//! The HTTP providers against a real server on 127.0.0.1 (tests/standin): the happy paths of
//! both APIs and every failure the write path must survive.

use memory_ext_standin::StandIn;
use memory_providers::embed::http::{embed, Api, HttpConfig};
use memory_providers::embed::EmbedError;
use std::sync::OnceLock;
use std::time::Instant;

fn standin() -> &'static StandIn {
    static S: OnceLock<StandIn> = OnceLock::new();
    S.get_or_init(|| StandIn::start(0))
}

fn cfg(api: Api, model: &str) -> HttpConfig {
    let s = standin();
    HttpConfig {
        api,
        url: match api {
            Api::OpenAi => format!("{}/v1", s.base()),
            Api::Ollama => s.base(),
        },
        model: model.into(),
        dims: 8,
        api_key: Some("sk-test-secret".into()),
        timeout_ms: 1_000,
        max_retries: 2,
        batch: 4,
    }
}

#[test]
fn both_apis_return_one_vector_per_input_in_order() {
    for api in [Api::OpenAi, Api::Ollama] {
        let inputs: Vec<String> = (0..10).map(|i| format!("text {i}")).collect();
        let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        let model = format!("mock-8-{api:?}");
        let v = embed(&cfg(api, &model), &refs).unwrap();
        assert_eq!(v.len(), 10);
        for (t, x) in refs.iter().zip(&v) {
            assert_eq!(x, &memory_ext_standin::vector(t, 8), "{api:?} {t}");
        }
        // batch 4: 10 inputs take 3 requests.
        assert_eq!(standin().hits(&model), 3);
    }
}

#[test]
fn endpoint_down_fails_fast() {
    // A port nothing listens on: bind and drop a listener to find one.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let c = HttpConfig {
        url: format!("http://127.0.0.1:{port}/v1"),
        ..cfg(Api::OpenAi, "mock-8")
    };
    let t = Instant::now();
    assert!(matches!(
        embed(&c, &["x"]),
        Err(EmbedError::Unreachable { .. })
    ));
    assert!(t.elapsed().as_millis() < 1_000);
}

#[test]
fn slow_past_the_timeout() {
    let c = HttpConfig {
        timeout_ms: 200,
        ..cfg(Api::OpenAi, "slow-2000")
    };
    let t = Instant::now();
    assert!(matches!(
        embed(&c, &["x"]),
        Err(EmbedError::Timeout {
            timeout_ms: 200,
            ..
        })
    ));
    assert!(t.elapsed().as_millis() < 1_500, "{:?}", t.elapsed());
}

#[test]
fn http_500_is_retried_then_reported() {
    let e = embed(&cfg(Api::Ollama, "fail-500"), &["x"]).unwrap_err();
    assert!(matches!(e, EmbedError::Http { status: 500, .. }), "{e}");
    assert_eq!(standin().hits("fail-500"), 3, "first attempt + 2 retries");
}

#[test]
fn http_429_then_success() {
    let v = embed(&cfg(Api::OpenAi, "flaky-429-a"), &["x", "y"]).unwrap();
    assert_eq!(v.len(), 2);
    assert_eq!(standin().hits("flaky-429-a"), 2);
    // With no retries allowed, the 429 is the answer.
    let c = HttpConfig {
        max_retries: 0,
        ..cfg(Api::OpenAi, "flaky-429-b")
    };
    assert!(matches!(
        embed(&c, &["x"]),
        Err(EmbedError::Http { status: 429, .. })
    ));
}

#[test]
fn malformed_json() {
    assert!(matches!(
        embed(&cfg(Api::OpenAi, "malformed"), &["x"]),
        Err(EmbedError::Malformed { .. })
    ));
}

#[test]
fn wrong_dimension_count() {
    assert!(matches!(
        embed(&cfg(Api::Ollama, "wrong-dims"), &["x"]),
        Err(EmbedError::Dimensions {
            expected: 8,
            got: 7
        })
    ));
}

#[test]
fn wrong_number_of_vectors() {
    assert!(matches!(
        embed(&cfg(Api::OpenAi, "wrong-count"), &["x", "y"]),
        Err(EmbedError::Count {
            expected: 2,
            got: 1,
            ..
        })
    ));
}

#[test]
fn api_key_never_appears_in_errors() {
    let e = embed(&cfg(Api::OpenAi, "echo-auth"), &["x"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("401"), "{e}");
    assert!(e.contains("[redacted]"), "{e}");
    assert!(!e.contains("sk-test-secret"), "{e}");
}

#[test]
fn missing_settings_are_config_errors() {
    let c = HttpConfig {
        url: "".into(),
        ..cfg(Api::OpenAi, "mock-8")
    };
    assert!(matches!(embed(&c, &["x"]), Err(EmbedError::Config(_))));
}
