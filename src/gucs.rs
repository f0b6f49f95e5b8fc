//! Every `memory_ext.*` setting, registered once from `_PG_init`.
//!
//! Statics are private; the rest of the crate reads them through the typed accessors below.
//! The `memory_ext` prefix is reserved, so a typo such as `SET memory_ext.usr_id = ...` is an
//! error instead of a silently ignored placeholder.

use crate::pg::version;
use memory_core::tokens::Encoding;
use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::pg_guard;
use pgrx::{pg_sys, PostgresGucEnum};
use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::atomic::{AtomicPtr, Ordering};

/// Where the current tenant comes from.
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum TenantSource {
    /// `memory_ext.user_id`, set by the application per session or transaction.
    #[name = c"setting"]
    Setting,
    /// The name of the role running the statement (`current_user`): one database role per
    /// tenant, nothing the session can forge.
    #[name = c"role"]
    Role,
}

#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum TokenEncoding {
    #[name = c"cl100k_base"]
    Cl100kBase,
    #[name = c"o200k_base"]
    O200kBase,
}

/// Which embedding provider turns text into vectors.
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum EmbeddingProvider {
    /// A built-in model in-process (`memory_ext.builtin_model`), 384 dimensions, no
    /// network.
    #[name = c"builtin"]
    Builtin,
    /// Any OpenAI-compatible `POST <url>/embeddings`.
    #[name = c"openai"]
    OpenAi,
    /// Ollama's `POST <url>/api/embed`.
    #[name = c"ollama"]
    Ollama,
}

/// Which built-in model embeds (crates/memory_providers/src/embed/builtin.rs `MODELS`).
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum BuiltinModel {
    /// all-MiniLM-L6-v2: 6 layers, the default (docs/retrieval.md "Built-in models" says why).
    #[name = c"all-MiniLM-L6-v2"]
    MiniLm,
    /// bge-small-en-v1.5: 12 layers, about twice the embedding time.
    #[name = c"bge-small-en-v1.5"]
    BgeSmall,
    /// multilingual-e5-small: 12 layers, ~100 languages; a question in one language finds a
    /// memory written in another (docs/retrieval.md "Languages").
    #[name = c"multilingual-e5-small"]
    MultilingualE5,
}

/// The precision of a newly registered embedding model's HNSW indexes (sql/embed.sql
/// `memory._ensure_embedding_model`; read there by current_setting).
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum EmbeddingPrecision {
    /// 4-byte floats (pgvector's `vector`), up to 2,000 dimensions; `halfvec` above.
    #[name = c"full"]
    Full,
    /// 2-byte floats (pgvector's `halfvec`), up to 4,000 dimensions: half the index's memory
    /// (docs/performance.md "Half precision").
    #[name = c"half"]
    Half,
}

/// Where the memories a tool call writes come from (memory_core::consent).
#[derive(PostgresGucEnum, Clone, Copy, PartialEq, Eq, Debug)]
pub enum ToolSource {
    /// Concluded by the model: a sensitive category becomes a consent proposal.
    #[name = c"inferred"]
    Inferred,
    /// Stated by the user: for an application whose tool calls only carry what the user typed.
    #[name = c"user"]
    User,
}

/// The current tenant when `tenant_source = setting`. Empty means none: row-level security
/// then shows no rows to roles without BYPASSRLS.
static USER_ID: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// `setting` (default) or `role`. Superuser-only: a session that could switch it could pick
/// its own tenant even where the DBA chose role-based tenancy.
static TENANT_SOURCE: GucSetting<TenantSource> =
    GucSetting::<TenantSource>::new(TenantSource::Setting);

/// The tiktoken encoding that message token counts are stored in (counted once, at write time;
/// changing it affects messages written afterwards).
static TOKEN_ENCODING: GucSetting<TokenEncoding> =
    GucSetting::<TokenEncoding>::new(TokenEncoding::Cl100kBase);

static EMBEDDING_PROVIDER: GucSetting<EmbeddingProvider> =
    GucSetting::<EmbeddingProvider>::new(EmbeddingProvider::Builtin);

/// Base URL of the HTTP provider (`.../v1` for OpenAI-compatible, the server root for Ollama).
/// Superuser-only: whoever sets it receives the API key in the Authorization header.
static EMBEDDING_URL: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// Model name sent to the HTTP provider (ignored by the built-in one). Superuser-only, like the
/// provider and dimensions: each model a database stores vectors of gets HNSW indexes on every
/// write path, so which model is used is the operator's choice, not a tenant's (a tenant that
/// could name models filled the registry with junk ones).
static EMBEDDING_MODEL: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// Expected dimensions from the HTTP provider; 0 = whatever it returns (checked for
/// consistency per model). The built-in model is always 384.
static EMBEDDING_DIMS: GucSetting<i32> = GucSetting::<i32>::new(0);
/// Set per database (`ALTER DATABASE ... SET`): which precision a model's indexes get when
/// the model is first stored; `memory_embedding_reindex()` moves models registered before.
/// Superuser-only like the model: it decides the indexes every write maintains.
static EMBEDDING_PRECISION: GucSetting<EmbeddingPrecision> =
    GucSetting::<EmbeddingPrecision>::new(EmbeddingPrecision::Full);
static BUILTIN_THREADS: GucSetting<i32> = GucSetting::<i32>::new(0);
/// Superuser-only like the provider: a switch re-embeds every row (the backfill).
static BUILTIN_MODEL: GucSetting<BuiltinModel> =
    GucSetting::<BuiltinModel>::new(BuiltinModel::MiniLm);

/// memory_query reranks the top of its ranking with the built-in cross-encoder when a request
/// does not say (`"rerank"`). Off by default: it costs a forward pass per candidate
/// (docs/performance.md).
static RERANK: GucSetting<bool> = GucSetting::<bool>::new(false);
/// The `source` of memories written by tool calls (memory_tool_call, the MCP gateway). A tool
/// call is the model's inference, never the user's statement, so by default a sensitive
/// category waits for consent; an application (not the model, which cannot set it) may say
/// otherwise for its sessions.
static TOOL_SOURCE: GucSetting<ToolSource> = GucSetting::<ToolSource>::new(ToolSource::Inferred);
/// Whom the connecting role acts for, added to its name in history's `actor` and a consent
/// decision's `decided_by` (sql/triggers.sql `memory._actor`): the gateway's inspector sets it to
/// `inspector: <token name>` per transaction. Read by SQL only (current_setting).
static ON_BEHALF_OF: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
/// How many of the best-ranked memories the reranker reads.
static RERANK_DEPTH: GucSetting<i32> = GucSetting::<i32>::new(10);

/// Bearer token for the HTTP provider. Superuser-only and hidden from pg_settings/SHOW for
/// everyone else; never copied into an error or log message.
static EMBEDDING_API_KEY: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(SECRET_MASK));

/// Per-attempt timeout of every HTTP call to a provider, in milliseconds. A write may wait on
/// it, so the default is short: 5 s.
static HTTP_TIMEOUT_MS: GucSetting<i32> = GucSetting::<i32>::new(5_000);

/// Directory of the active built-in model; empty = `<sharedir>/extension/memory_ext/models/<name>`
/// (where `make deps` installs each, `<name>` from `memory_ext.builtin_model`). Superuser-only: the server reads files from it.
static MODEL_PATH: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// Embed messages and memories synchronously when they are written. Off: rows are stored
/// without a vector and the backfill embeds them (faster bulk loads).
static EMBED_ON_WRITE: GucSetting<bool> = GucSetting::<bool>::new(true);

/// Attempts per row before the backfill gives up on it and leaves the error in
/// memory.embedding_failures for an operator.
static EMBEDDING_MAX_ATTEMPTS: GucSetting<i32> = GucSetting::<i32>::new(5);

/// memory_write: a new memory at least this cosine-similar to an existing one (and agreeing
/// on names and numbers) updates it instead of being added. 0.95 = the closest 0.5% of
/// nearest-neighbour pairs on the LoCoMo dev split, which on inspection are paraphrases
/// (crates/memory_core/src/dedupe.rs has the figures).
static MERGE_THRESHOLD: GucSetting<f64> = GucSetting::<f64>::new(0.95);

/// Consent (docs/design.md "Consent"): an inferred signal for a benign field
/// corroborates a pending proposal that says the same in other words when their cosine
/// similarity reaches this — stricter than MERGE_THRESHOLD, as context updates must
/// be — and the words they do not share only qualify it
/// (memory_core::consent::corroborates). With all-MiniLM-L6-v2 rewordings score 0.95-0.99
/// ("really wants to run a marathon" 0.963); different values score as high (0.958, 0.962),
/// which is why the word rule decides those. Superuser-only: a tenant must not loosen its own
/// consent.
static CORROBORATE_THRESHOLD: GucSetting<f64> = GucSetting::<f64>::new(0.96);
/// Consent: an inferred write to a benign field with at least this `confidence` is written
/// without a second signal (an inference with high confidence).
static CORROBORATE_CONFIDENCE: GucSetting<f64> = GucSetting::<f64>::new(0.9);

/// memory_write: neighbours at least this similar get a `related_to` edge. 0.80 = the top quarter
/// of nearest-neighbour similarities on the LoCoMo dev split (p75 0.788).
static LINK_THRESHOLD: GucSetting<f64> = GucSetting::<f64>::new(0.80);

/// Overrides of memory_query's ranking weights, as a JSON object (keys of
/// memory_core::rank::Weights: lexical, vector, hop1, hop2, thread, actor, importance, pinned,
/// recency, half_life_days). Empty = the tuned defaults. For ablations and per-deployment tuning.
static RANK_WEIGHTS: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// Lifecycle (docs/design.md "TTL and soft delete"): an unpinned memory below `ttl_min_importance` that nobody retrieved
/// for `ttl_days` is soft-deleted by the TTL sweep; soft-deleted memories are purged
/// `purge_after_days` later. Superuser-only: they decide when every tenant's data goes.
/// The optional LLM (docs/api.md "Embeddings and LLM"): an OpenAI-compatible chat endpoint.
/// Unset: consolidation uses its deterministic rule.
static LLM_URL: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static LLM_MODEL: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);
static LLM_API_KEY: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(SECRET_MASK));
/// Same-fact prompts per tenant per day (the per-tenant budget of docs/design.md "Consolidation").
static CONSOLIDATION_MAX_LLM_CALLS: GucSetting<i32> = GucSetting::<i32>::new(20);
static TTL_DAYS: GucSetting<i32> = GucSetting::<i32>::new(60);
static TTL_MIN_IMPORTANCE: GucSetting<i32> = GucSetting::<i32>::new(3);
static PURGE_AFTER_DAYS: GucSetting<i32> = GucSetting::<i32>::new(30);

/// The background worker (src/worker): the database it connects to. It can serve one database;
/// where the extension is not installed it waits. A change takes effect on reload (the worker
/// restarts into the new database).
static DATABASE: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(c"postgres"));
/// The jobs the worker schedules itself, comma-separated (memory_core::schedule::JOBS, all by
/// default); empty = none, for when pg_cron or another scheduler calls the SQL functions.
static WORKER_JOBS: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(memory_core::schedule::DEFAULT_JOBS));
/// How long the worker sleeps between looks for due jobs and rows to embed, in seconds. 10 s:
/// a row written while the provider was down gets its vector within seconds of it returning,
/// and an idle worker costs one cheap query per wake.
static WORKER_NAPTIME: GucSetting<i32> = GucSetting::<i32>::new(10);
/// Seconds between TTL sweeps. 6 h: expiry is measured in days (60 by default), and the sweep
/// reads every partition once (no index on last_accessed_at, see
/// sql/queries/lifecycle_ttl_candidates.sql): 13-20 s at a million memories on the bench machine.
static TTL_INTERVAL: GucSetting<i32> = GucSetting::<i32>::new(6 * 3600);
/// The hour (server time zone) at which the daily consolidation window opens, and how many
/// hours it spans: each tenant runs once a day at its own slot inside it (memory_core::schedule).
static CONSOLIDATION_HOUR: GucSetting<i32> = GucSetting::<i32>::new(3);
static CONSOLIDATION_WINDOW_HOURS: GucSetting<i32> = GucSetting::<i32>::new(24);
/// Same-fact checks per tenant per day when the worker runs consolidation (memory_consolidate's
/// max_pairs default).
static CONSOLIDATION_MAX_PAIRS: GucSetting<i32> = GucSetting::<i32>::new(50);
/// Rows per backfill transaction. 32 = one batch of the built-in model (~0.3 s of CPU): row
/// locks are held only that long.
static BACKFILL_BATCH: GucSetting<i32> = GucSetting::<i32>::new(32);
/// Consent (docs/api.md "Consent"): categories whose inferred changes wait for the user's
/// approval, and those written once corroborated (the defaults of docs/design.md "Consent").
static CONSENT_CATEGORIES: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(c"preferred_name,pronouns,city,language"));
static CORROBORATE_CATEGORIES: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(c"tone,goals"));
/// Extraction (docs/design.md "Extraction"): messages read per batch (one LLM call). 20 turns
/// fit a small model's context with room for the known facts and the answer.
static EXTRACT_BATCH: GucSetting<i32> = GucSetting::<i32>::new(20);
/// Memories extraction may write per tenant per day (docs/design.md "Procedures and
/// extraction": a per-tenant daily cap).
static EXTRACT_DAILY_CAP: GucSetting<i32> = GucSetting::<i32>::new(100);
/// Tokens (in and out) the model may spend on one tenant's summaries per day (docs/api.md
/// "Summaries"); past it, stale summaries wait for the next day. 0: summaries never ask the
/// model (the answer without one is written).
static SUMMARY_DAILY_TOKENS: GucSetting<i32> = GucSetting::<i32>::new(50_000);
/// An entity gets its built-in summary once this many active memories name it.
static SUMMARY_ENTITY_MIN: GucSetting<i32> = GucSetting::<i32>::new(5);
/// Whether the worker defines the built-in summaries (profile, entities, projects).
static SUMMARY_BUILTIN: GucSetting<bool> = GucSetting::<bool>::new(true);
/// A thread whose last change is this old has ended its run: the worker writes its episode.
/// 30 minutes; 0 turns idle run ends off (run_end still works).
static RUN_IDLE_TIMEOUT: GucSetting<i32> = GucSetting::<i32>::new(1800);
/// The context window the worker compacts against after a run ends when run_end named none;
/// 0: no compaction unless run_end names a window.
static CONTEXT_WINDOW: GucSetting<i32> = GucSetting::<i32>::new(0);

/// memory.events (docs/design.md "Operational events"): one row per query, write, merge, delete and worker job.
/// Superuser-only: whether activity is tracked is the operator's decision, not a session's.
static TRACK_EVENTS: GucSetting<bool> = GucSetting::<bool>::new(true);

/// Screening's policy (docs/api.md "Screening"): `name:action, ...` over the defaults of
/// memory_core::screen::DEFAULT_POLICY. Superuser-only: a tenant must not be able to let its
/// secrets through.
static SCREEN: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// Whether a tenant may erase itself with memory_erase_tenant (otherwise only the operator may).
/// Superuser-only: a tenant must not be able to turn it on for itself.
static SELF_ERASE: GucSetting<bool> = GucSetting::<bool>::new(false);

/// memory_purge drops memory.events rows older than this many days (0: keep them forever).
static EVENTS_RETENTION_DAYS: GucSetting<i32> = GucSetting::<i32>::new(90);

/// Days of change log the purge keeps (0: all). The delta header needs only the changes since
/// the revision an agent last saw; an agent that comes back after longer is told "too many
/// changes" instead of a partial list. 30 days: an agent idle for a month re-reads its memory.
static CHANGE_LOG_DAYS: GucSetting<i32> = GucSetting::<i32>::new(30);
/// Days of change feed memory_purge keeps (memory_changes, sql/changes.sql).
static CHANGES_DAYS: GucSetting<i32> = GucSetting::<i32>::new(7);
/// How long an idempotency key answers a repeat (docs/api.md "Idempotency").
static IDEMPOTENCY_DAYS: GucSetting<i32> = GucSetting::<i32>::new(7);

// Limits on what one call may ask for (docs/operations.md "Limits"). Each bounds the memory or
// time one call can take: before them a 100 MB `content` took a backend to ~1.5 GB, a 10 MB
// query text 5-7 s, 100,000 categories 76 s, and a regular expression ran past 30 s.

/// Largest text a call may store in one value (a memory's text or content, a message, a memory
/// file, a detail, a checkpoint), in bytes. 16 MB: room for a 10 MB tool output, far from the
/// 1 GB a value may reach.
static MAX_VALUE_BYTES: GucSetting<i32> = GucSetting::<i32>::new(16 * 1024 * 1024);
/// Longest query text (memory_query, memory_search, conversation_search, memory_file_search),
/// in characters. A query is a question, not a document: 10,000 is ~2,000 words.
static MAX_QUERY_CHARS: GucSetting<i32> = GucSetting::<i32>::new(10_000);
/// Most inputs in one batch call (memory_embed_batch, memory_write_batch): enough to amortise
/// embedding (batches of 32) and round trips, small enough to keep a transaction's locks short.
static MAX_BATCH: GucSetting<i32> = GucSetting::<i32>::new(10_000);
/// Most categories memory_configure accepts for one tenant.
static MAX_CATEGORIES: GucSetting<i32> = GucSetting::<i32>::new(1_000);
/// Time a regular expression (memory_file_grep) may run, in milliseconds.
static REGEX_TIMEOUT_MS: GucSetting<i32> = GucSetting::<i32>::new(5_000);

/// Registers every setting, a function per feature below, then reserves the prefix.
pub fn init() {
    register_tenancy();
    register_screening();
    register_embedding();
    register_ranking();
    register_writing();
    register_consent();
    register_llm();
    register_lifecycle();
    register_worker();
    register_extraction();
    register_history();
    register_limits();
    // SAFETY: called from _PG_init in the backend's main thread with a static, NUL-terminated
    // name; MarkGUCPrefixReserved only records the prefix (and warns about stale placeholders).
    unsafe { pg_sys::MarkGUCPrefixReserved(c"memory_ext".as_ptr()) };
}

/// Tenancy (docs/api.md "Identity and tenancy"): who the current tenant is and who acts for it.
fn register_tenancy() {
    GucRegistry::define_string_guc(
        c"memory_ext.user_id",
        c"The current tenant (user_id) for row-level security and API calls.",
        c"Applications set it per session or transaction. Ignored when memory_ext.tenant_source = 'role'.",
        &USER_ID,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"memory_ext.self_erase",
        c"Let a tenant erase itself with memory_erase_tenant (otherwise only the extension's owner or a superuser may).",
        c"",
        &SELF_ERASE,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_enum_guc(
        c"memory_ext.tenant_source",
        c"Where the current tenant comes from: 'setting' (memory_ext.user_id) or 'role' (current_user).",
        c"",
        &TENANT_SOURCE,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"memory_ext.on_behalf_of",
        c"Whom this session's role acts for, shown after the role in history's actor (\"role (on_behalf_of)\").",
        c"The role stays first: a session can add to its name, not replace it.",
        &ON_BEHALF_OF,
        GucContext::Userset,
        GucFlags::default(),
    );
}

/// Screening (docs/api.md "Screening (0.11.0)"): what is done with secrets and personal data in stored text.
fn register_screening() {
    GucRegistry::define_string_guc(
        c"memory_ext.screen",
        c"What screening does with secrets and personal data on the way in: name:action, ... (actions allow, flag, redact, block).",
        c"Names are families (secret, payment_card, iban, national_id, email, phone) or detectors; what is not named keeps its default (secrets, cards, IBANs, national ids redacted).",
        &SCREEN,
        GucContext::Suset,
        GucFlags::default(),
    );
}

/// Embeddings (docs/api.md "Embeddings and LLM"): the provider, the built-in models, token counts, the write path and the backfill.
fn register_embedding() {
    GucRegistry::define_enum_guc(
        c"memory_ext.token_encoding",
        c"tiktoken encoding for stored message token counts: cl100k_base or o200k_base.",
        c"",
        &TOKEN_ENCODING,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_enum_guc(
        c"memory_ext.embedding_provider",
        c"Embedding provider: builtin (all-MiniLM-L6-v2 in-process), openai, or ollama.",
        c"",
        &EMBEDDING_PROVIDER,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_enum_guc(
        c"memory_ext.builtin_model",
        c"Built-in embedding model: all-MiniLM-L6-v2, bge-small-en-v1.5 or multilingual-e5-small.",
        c"Rows of the other model are re-embedded by the backfill.",
        &BUILTIN_MODEL,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"memory_ext.embedding_url",
        c"Base URL of the HTTP embedding provider (ending in /v1 for OpenAI-compatible servers).",
        c"",
        &EMBEDDING_URL,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"memory_ext.embedding_model",
        c"Model name sent to the HTTP embedding provider.",
        c"",
        &EMBEDDING_MODEL,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_enum_guc(
        c"memory_ext.embedding_precision",
        c"Precision of a new embedding model's HNSW indexes: full (vector) or half (halfvec).",
        c"Models registered before keep theirs until memory_embedding_reindex() moves them.",
        &EMBEDDING_PRECISION,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.embedding_dims",
        c"Expected embedding dimensions from the HTTP provider (0 = whatever it returns).",
        c"",
        &EMBEDDING_DIMS,
        0,
        16_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    // SAFETY: the hooks are #[pg_guard]ed and follow the GUC hook contracts (secret_check).
    unsafe {
        GucRegistry::define_string_guc_with_hooks(
            c"memory_ext.embedding_api_key",
            c"API key for the HTTP embedding provider (superuser-only, never shown).",
            c"",
            &EMBEDDING_API_KEY,
            GucContext::Suset,
            GucFlags::SUPERUSER_ONLY | GucFlags::NO_SHOW_ALL,
            Some(secret_check),
            Some(embedding_api_key_assign),
            None,
        );
    }
    GucRegistry::define_int_guc(
        c"memory_ext.http_timeout_ms",
        c"Per-attempt timeout of HTTP calls to embedding and LLM providers.",
        c"",
        &HTTP_TIMEOUT_MS,
        100,
        120_000,
        GucContext::Userset,
        GucFlags::UNIT_MS,
    );
    GucRegistry::define_int_guc(
        c"memory_ext.builtin_threads",
        c"Threads the built-in model's matrix products use in a backend (0 = the CPUs this server may use, at most 4).",
        c"Read when a backend first loads the model.",
        &BUILTIN_THREADS,
        0,
        64,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"memory_ext.model_path",
        c"Directory of the active built-in embedding model (empty: the extension's share directory).",
        c"",
        &MODEL_PATH,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"memory_ext.embed_on_write",
        c"Embed messages and memories when they are written (off: leave them to the backfill).",
        c"",
        &EMBED_ON_WRITE,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.embedding_max_attempts",
        c"Backfill attempts per row before its error is left for an operator.",
        c"",
        &EMBEDDING_MAX_ATTEMPTS,
        1,
        100,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.backfill_batch",
        c"Rows the background worker embeds per backfill transaction.",
        c"",
        &BACKFILL_BATCH,
        1,
        1_000,
        GucContext::Sighup,
        GucFlags::default(),
    );
}

/// Ranking (crates/memory_core/src/rank.rs): weights and the reranker.
fn register_ranking() {
    GucRegistry::define_bool_guc(
        c"memory_ext.rerank",
        c"Rerank memory_query's best memories with the built-in cross-encoder by default.",
        c"A request's \"rerank\" field overrides it.",
        &RERANK,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.rerank_depth",
        c"How many of the best-ranked memories the reranker reads.",
        c"",
        &RERANK_DEPTH,
        1,
        100,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"memory_ext.rank_weights",
        c"JSON object overriding memory_query's ranking weights (empty: the tuned defaults).",
        c"",
        &RANK_WEIGHTS,
        GucContext::Userset,
        GucFlags::default(),
    );
}

/// Writing memories: when a write merges with or links to what is there, and where a tool call's memories come from.
fn register_writing() {
    GucRegistry::define_enum_guc(
        c"memory_ext.tool_source",
        c"The source of memories that tool calls write: inferred (the default: sensitive categories wait for consent) or user.",
        c"",
        &TOOL_SOURCE,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_float_guc(
        c"memory_ext.merge_threshold",
        c"Cosine similarity at which memory_write updates an existing memory instead of adding one.",
        c"",
        &MERGE_THRESHOLD,
        0.0,
        1.0,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_float_guc(
        c"memory_ext.link_threshold",
        c"Cosine similarity at which memory_write links a new memory to a neighbour.",
        c"",
        &LINK_THRESHOLD,
        0.0,
        1.0,
        GucContext::Userset,
        GucFlags::default(),
    );
}

/// Consent (docs/design.md "Consent"): what waits for approval or a second sign.
fn register_consent() {
    GucRegistry::define_float_guc(
        c"memory_ext.corroborate_threshold",
        c"Cosine similarity at which an inferred signal corroborates a pending benign-field proposal worded differently.",
        c"",
        &CORROBORATE_THRESHOLD,
        0.0,
        1.0,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_float_guc(
        c"memory_ext.corroborate_confidence",
        c"Confidence at which an inferred write to a benign field is written without a second signal.",
        c"",
        &CORROBORATE_CONFIDENCE,
        0.0,
        1.0,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"memory_ext.consent_categories",
        c"Categories whose inferred changes become consent proposals (comma-separated).",
        c"",
        &CONSENT_CATEGORIES,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"memory_ext.corroborate_categories",
        c"Categories whose inferred changes are written once a second signal corroborates them (comma-separated).",
        c"",
        &CORROBORATE_CATEGORIES,
        GucContext::Suset,
        GucFlags::default(),
    );
}

/// The optional LLM (docs/api.md "Embeddings and LLM").
fn register_llm() {
    GucRegistry::define_string_guc(
        c"memory_ext.llm_url",
        c"Base URL (ending in /v1) of an OpenAI-compatible chat endpoint; empty: deterministic fallbacks.",
        c"",
        &LLM_URL,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"memory_ext.llm_model",
        c"Model name sent to the LLM endpoint.",
        c"",
        &LLM_MODEL,
        GucContext::Suset,
        GucFlags::default(),
    );
    // SAFETY: as for memory_ext.embedding_api_key.
    unsafe {
        GucRegistry::define_string_guc_with_hooks(
            c"memory_ext.llm_api_key",
            c"API key for the LLM endpoint (superuser-only, never shown).",
            c"",
            &LLM_API_KEY,
            GucContext::Suset,
            GucFlags::SUPERUSER_ONLY | GucFlags::NO_SHOW_ALL,
            Some(secret_check),
            Some(llm_api_key_assign),
            None,
        );
    }
}

/// Lifecycle (docs/design.md "TTL and soft delete").
fn register_lifecycle() {
    GucRegistry::define_int_guc(
        c"memory_ext.ttl_days",
        c"Days without retrieval after which the TTL sweep soft-deletes an unimportant, unpinned memory.",
        c"",
        &TTL_DAYS,
        1,
        36_500,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.ttl_min_importance",
        c"Memories of this importance or more never expire by TTL.",
        c"",
        &TTL_MIN_IMPORTANCE,
        1,
        6,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.purge_after_days",
        c"Days a soft-deleted memory stays restorable before memory_purge removes it.",
        c"",
        &PURGE_AFTER_DAYS,
        0,
        36_500,
        GucContext::Suset,
        GucFlags::default(),
    );
}

/// The background worker (src/worker/): where it runs, which jobs, how often.
fn register_worker() {
    GucRegistry::define_int_guc(
        c"memory_ext.consolidation_max_llm_calls",
        c"LLM prompts consolidation may send per tenant per day.",
        c"",
        &CONSOLIDATION_MAX_LLM_CALLS,
        0,
        10_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"memory_ext.database",
        c"The database the memory_ext background worker connects to.",
        c"Needs memory_ext in shared_preload_libraries. The worker restarts into a new value on reload.",
        &DATABASE,
        GucContext::Sighup,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"memory_ext.worker_jobs",
        c"Jobs the background worker schedules, comma-separated (empty = none); by default every job (its boot value lists them).",
        c"Leave out the jobs that pg_cron or another scheduler runs through the SQL functions.",
        &WORKER_JOBS,
        GucContext::Sighup,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.worker_naptime",
        c"Seconds the background worker sleeps between looks for due jobs and rows to embed.",
        c"",
        &WORKER_NAPTIME,
        1,
        3600,
        GucContext::Sighup,
        GucFlags::UNIT_S,
    );
    GucRegistry::define_int_guc(
        c"memory_ext.ttl_interval",
        c"Time between the background worker's TTL sweeps.",
        c"",
        &TTL_INTERVAL,
        1,
        7 * 86_400,
        GucContext::Sighup,
        GucFlags::UNIT_S,
    );
    GucRegistry::define_int_guc(
        c"memory_ext.consolidation_hour",
        c"Hour of the day (server time zone) at which the daily consolidation window opens.",
        c"",
        &CONSOLIDATION_HOUR,
        0,
        23,
        GucContext::Sighup,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.consolidation_window_hours",
        c"Hours over which tenants' daily consolidation runs are spread, from memory_ext.consolidation_hour.",
        c"",
        &CONSOLIDATION_WINDOW_HOURS,
        1,
        24,
        GucContext::Sighup,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.consolidation_max_pairs",
        c"Same-fact checks per tenant per day when the background worker consolidates.",
        c"",
        &CONSOLIDATION_MAX_PAIRS,
        0,
        10_000,
        GucContext::Sighup,
        GucFlags::default(),
    );
}

/// Extraction and runs (docs/design.md "Extraction").
fn register_extraction() {
    GucRegistry::define_int_guc(
        c"memory_ext.extract_batch",
        c"Messages extraction reads per batch (one LLM call).",
        c"",
        &EXTRACT_BATCH,
        1,
        200,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.summary_daily_tokens",
        c"Model tokens one tenant's summaries may use per day (0: answers without the model).",
        c"",
        &SUMMARY_DAILY_TOKENS,
        0,
        100_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.summary_entity_min",
        c"Active memories that must name an entity before it gets a built-in summary.",
        c"",
        &SUMMARY_ENTITY_MIN,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"memory_ext.summary_builtin",
        c"Whether the worker defines the built-in summaries (profile, entities, projects).",
        c"",
        &SUMMARY_BUILTIN,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.extract_daily_cap",
        c"Memories extraction may write per tenant per day.",
        c"",
        &EXTRACT_DAILY_CAP,
        0,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.run_idle_timeout",
        c"Idle time after which the worker ends a thread's run and writes its episode; 0 = only run_end ends runs.",
        c"",
        &RUN_IDLE_TIMEOUT,
        0,
        30 * 86_400,
        GucContext::Sighup,
        GucFlags::UNIT_S,
    );
    GucRegistry::define_int_guc(
        c"memory_ext.context_window",
        c"Context window (tokens) the worker compacts against after a run ends, when run_end names none; 0 = none.",
        c"",
        &CONTEXT_WINDOW,
        0,
        100_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
}

/// Events, idempotency keys and the change log: what is kept, how long.
fn register_history() {
    GucRegistry::define_bool_guc(
        c"memory_ext.track_events",
        c"Record operational events (queries, writes, merges, deletes, worker jobs) in memory.events.",
        c"",
        &TRACK_EVENTS,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.events_retention_days",
        c"memory_purge drops memory.events rows older than this many days (0: keep them).",
        c"",
        &EVENTS_RETENTION_DAYS,
        0,
        36_500,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.idempotency_days",
        c"Days an idempotency key answers a repeat with the first call's answer; memory_purge deletes older keys.",
        c"",
        &IDEMPOTENCY_DAYS,
        1,
        36_500,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.change_log_days",
        c"Days of change log memory_purge keeps (0: all); older delta headers say \"too many changes\".",
        c"",
        &CHANGE_LOG_DAYS,
        0,
        36_500,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.changes_days",
        c"Days of change feed (memory_changes) memory_purge keeps (0: all); a reader further behind misses what went.",
        c"",
        &CHANGES_DAYS,
        0,
        36_500,
        GucContext::Suset,
        GucFlags::default(),
    );
}

/// Limits on what one call may bring.
fn register_limits() {
    GucRegistry::define_int_guc(
        c"memory_ext.max_value_bytes",
        c"Largest text one call may store in one value (memory text or content, message, file, detail, checkpoint).",
        c"",
        &MAX_VALUE_BYTES,
        1024,
        i32::MAX,
        GucContext::Suset,
        GucFlags::UNIT_BYTE,
    );
    GucRegistry::define_int_guc(
        c"memory_ext.max_query_chars",
        c"Longest query text memory_query, memory_search, conversation_search and memory_file_search accept.",
        c"",
        &MAX_QUERY_CHARS,
        10,
        10_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.max_batch",
        c"Most inputs in one memory_embed_batch or memory_write_batch call.",
        c"",
        &MAX_BATCH,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.max_categories",
        c"Most categories memory_configure accepts for one tenant.",
        c"",
        &MAX_CATEGORIES,
        1,
        1_000_000,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"memory_ext.regex_timeout_ms",
        c"Time a regular expression of memory_file_grep may run.",
        c"",
        &REGEX_TIMEOUT_MS,
        1,
        3_600_000,
        GucContext::Suset,
        GucFlags::UNIT_MS,
    );
}

/// `memory_ext.user_id`, `None` when unset or empty.
pub fn user_id() -> Option<String> {
    string(&USER_ID)
}

pub fn tenant_source() -> TenantSource {
    TENANT_SOURCE.get()
}

pub fn token_encoding() -> Encoding {
    match TOKEN_ENCODING.get() {
        TokenEncoding::Cl100kBase => Encoding::Cl100kBase,
        TokenEncoding::O200kBase => Encoding::O200kBase,
    }
}

/// What `SHOW`, `pg_settings` and the server log see of a secret setting, set or not. It is
/// also the settings' boot value: Postgres logs `parameter "..." changed to "<the file's raw
/// value>"` on reload whenever the visible value changes, so the visible value must never
/// change, not even from unset to set.
const SECRET_MASK: &CStr = c"********";

/// The real values of the two secret settings, kept by their assign hooks (`extra` of the
/// GUC machinery, which owns and frees them); the settings' visible values are the mask.
static EMBEDDING_API_KEY_VALUE: AtomicPtr<c_char> = AtomicPtr::new(std::ptr::null_mut());
static LLM_API_KEY_VALUE: AtomicPtr<c_char> = AtomicPtr::new(std::ptr::null_mut());

/// Check hook of a secret setting: moves the value into `extra` and shows the mask instead.
///
/// # Why
/// On `ALTER SYSTEM` + reload Postgres logs `parameter "memory_ext.llm_api_key" changed to
/// "sk-..."` (the raw value from the file), whatever the setting's flags, whenever its visible
/// value changed: with the visible value always the mask, it never changes, and the line is
/// never written.
#[pg_guard]
unsafe extern "C-unwind" fn secret_check(
    newval: *mut *mut c_char,
    extra: *mut *mut c_void,
    _source: pg_sys::GucSource::Type,
) -> bool {
    // SAFETY: the GUC machinery passes valid pointers; *newval is NULL or a C string in GUC
    // memory that it owns, which a check hook may replace with another in GUC memory; extra
    // must be in GUC memory too and becomes the machinery's to free (which memory that is
    // depends on the PostgreSQL version: pg::version::guc_strdup).
    unsafe {
        let v = *newval;
        if v.is_null() || *v == 0 || CStr::from_ptr(v) == SECRET_MASK {
            return true;
        }
        let secret = version::guc_strdup(v);
        if secret.is_null() {
            return false;
        }
        *extra = secret as *mut c_void;
        let mask = version::guc_strdup(SECRET_MASK.as_ptr());
        if mask.is_null() {
            return false;
        }
        version::guc_free(v);
        *newval = mask;
    }
    true
}

#[pg_guard]
unsafe extern "C-unwind" fn embedding_api_key_assign(_newval: *const c_char, extra: *mut c_void) {
    EMBEDDING_API_KEY_VALUE.store(extra as *mut c_char, Ordering::SeqCst);
}

#[pg_guard]
unsafe extern "C-unwind" fn llm_api_key_assign(_newval: *const c_char, extra: *mut c_void) {
    LLM_API_KEY_VALUE.store(extra as *mut c_char, Ordering::SeqCst);
}

fn secret(value: &AtomicPtr<c_char>) -> Option<String> {
    let p = value.load(Ordering::SeqCst);
    if p.is_null() {
        return None;
    }
    // SAFETY: the pointer is the current value's extra, kept alive by the GUC machinery until
    // the assign hook replaces it; read on the backend's thread only.
    let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    Some(s).filter(|s| !s.is_empty())
}

fn string(g: &GucSetting<Option<CString>>) -> Option<String> {
    g.get()
        .and_then(|c| c.into_string().ok())
        .filter(|s| !s.is_empty())
}

pub fn embedding_provider() -> EmbeddingProvider {
    EMBEDDING_PROVIDER.get()
}

pub fn builtin_model() -> BuiltinModel {
    BUILTIN_MODEL.get()
}

pub fn rerank() -> bool {
    RERANK.get()
}

/// `"inferred"` or `"user"`: the source of a tool call's writes.
pub fn tool_source() -> &'static str {
    match TOOL_SOURCE.get() {
        ToolSource::Inferred => "inferred",
        ToolSource::User => "user",
    }
}

pub fn rerank_depth() -> usize {
    RERANK_DEPTH.get().max(1) as usize
}

pub fn embedding_url() -> Option<String> {
    string(&EMBEDDING_URL)
}

pub fn embedding_model() -> Option<String> {
    string(&EMBEDDING_MODEL)
}

/// `memory_ext.builtin_threads`; 0 = the available CPUs, at most 4.
pub fn builtin_threads() -> usize {
    match BUILTIN_THREADS.get() {
        n if n > 0 => n as usize,
        _ => std::thread::available_parallelism().map_or(1, |n| n.get().min(4)),
    }
}

pub fn embedding_dims() -> usize {
    EMBEDDING_DIMS.get().max(0) as usize
}

pub fn embedding_api_key() -> Option<String> {
    secret(&EMBEDDING_API_KEY_VALUE)
}

pub fn http_timeout_ms() -> u64 {
    HTTP_TIMEOUT_MS.get().max(1) as u64
}

pub fn model_path() -> Option<String> {
    string(&MODEL_PATH)
}

pub fn embed_on_write() -> bool {
    EMBED_ON_WRITE.get()
}

pub fn embedding_max_attempts() -> i32 {
    EMBEDDING_MAX_ATTEMPTS.get()
}

pub fn merge_threshold() -> f64 {
    MERGE_THRESHOLD.get()
}

pub fn corroborate_threshold() -> f64 {
    CORROBORATE_THRESHOLD.get()
}

pub fn corroborate_confidence() -> f64 {
    CORROBORATE_CONFIDENCE.get()
}

pub fn link_threshold() -> f64 {
    LINK_THRESHOLD.get()
}

pub fn rank_weights() -> Option<String> {
    string(&RANK_WEIGHTS)
}

pub fn ttl_days() -> i32 {
    TTL_DAYS.get()
}

pub fn ttl_min_importance() -> i32 {
    TTL_MIN_IMPORTANCE.get()
}

pub fn purge_after_days() -> i32 {
    PURGE_AFTER_DAYS.get()
}

/// The LLM endpoint when both its URL and model are set.
pub fn llm() -> Option<memory_providers::llm::LlmConfig> {
    Some(memory_providers::llm::LlmConfig {
        url: string(&LLM_URL)?,
        model: string(&LLM_MODEL)?,
        api_key: secret(&LLM_API_KEY_VALUE),
        timeout_ms: http_timeout_ms(),
    })
}

pub fn screen() -> Option<String> {
    string(&SCREEN)
}

pub fn self_erase() -> bool {
    SELF_ERASE.get()
}

pub fn track_events() -> bool {
    TRACK_EVENTS.get()
}

pub fn idempotency_days() -> i32 {
    IDEMPOTENCY_DAYS.get()
}

pub fn change_log_days() -> i32 {
    CHANGE_LOG_DAYS.get()
}

pub fn changes_days() -> i32 {
    CHANGES_DAYS.get()
}

pub fn max_value_bytes() -> usize {
    MAX_VALUE_BYTES.get().max(1) as usize
}

pub fn max_query_chars() -> usize {
    MAX_QUERY_CHARS.get().max(1) as usize
}

pub fn max_batch() -> usize {
    MAX_BATCH.get().max(1) as usize
}

pub fn max_categories() -> usize {
    MAX_CATEGORIES.get().max(1) as usize
}

pub fn regex_timeout_ms() -> i32 {
    REGEX_TIMEOUT_MS.get().max(1)
}

pub fn events_retention_days() -> i32 {
    EVENTS_RETENTION_DAYS.get()
}

pub fn consolidation_max_llm_calls() -> i32 {
    CONSOLIDATION_MAX_LLM_CALLS.get()
}

/// The database the worker serves: the setting, `postgres` when it is empty (its default).
pub fn database() -> String {
    string(&DATABASE).unwrap_or_else(|| "postgres".into())
}

pub fn worker_jobs() -> String {
    string(&WORKER_JOBS).unwrap_or_default()
}

pub fn worker_naptime_s() -> i64 {
    WORKER_NAPTIME.get() as i64
}

pub fn ttl_interval_s() -> i64 {
    TTL_INTERVAL.get() as i64
}

pub fn consolidation_hour() -> i64 {
    CONSOLIDATION_HOUR.get() as i64
}

pub fn consolidation_window_hours() -> i64 {
    CONSOLIDATION_WINDOW_HOURS.get() as i64
}

pub fn consolidation_max_pairs() -> i64 {
    CONSOLIDATION_MAX_PAIRS.get() as i64
}

pub fn backfill_batch() -> i32 {
    BACKFILL_BATCH.get()
}

pub fn extract_batch() -> i32 {
    EXTRACT_BATCH.get().max(1)
}

pub fn extract_daily_cap() -> i32 {
    EXTRACT_DAILY_CAP.get().max(0)
}

pub fn summary_daily_tokens() -> i64 {
    SUMMARY_DAILY_TOKENS.get().max(0) as i64
}

pub fn summary_entity_min() -> i64 {
    SUMMARY_ENTITY_MIN.get().max(1) as i64
}

pub fn summary_builtin() -> bool {
    SUMMARY_BUILTIN.get()
}

pub fn run_idle_timeout_s() -> i64 {
    RUN_IDLE_TIMEOUT.get() as i64
}

pub fn context_window() -> Option<i32> {
    Some(CONTEXT_WINDOW.get()).filter(|w| *w > 0)
}

pub fn consent_categories() -> Vec<String> {
    memory_core::consent::categories(&string(&CONSENT_CATEGORIES).unwrap_or_default())
}

pub fn corroborate_categories() -> Vec<String> {
    memory_core::consent::categories(&string(&CORROBORATE_CATEGORIES).unwrap_or_default())
}
