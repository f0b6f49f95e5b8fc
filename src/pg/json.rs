//! `jsonb` arguments and values read into `serde_json`, with a SQL error instead of a panic.
//!
//! pgrx's own `JsonB` parses with `expect`: a document nested deeper than serde_json's 128
//! levels, or a number outside f64 (`1e400`), which jsonb stores happily, panicked and reached
//! the client as an internal error (XX000). [`Json`] is the same `jsonb` in SQL and the same
//! `serde_json::Value` in Rust, and answers those inputs with 22023 and a message that says
//! what is wrong.

use crate::error::OrRaise;
use memory_core::validate;
use pgrx::callconv::{Arg, ArgAbi};
use pgrx::nullable::Nullable;
use pgrx::pgrx_sql_entity_graph::metadata::{
    ArgumentError, ReturnsError, ReturnsRef, SqlMappingRef, SqlTranslatable,
};
use pgrx::prelude::*;
use serde_json::Value;

/// A Rust type that is `jsonb` in SQL, as an argument and a result: the SQL mapping and the
/// argument ABI, read through the type's FromDatum (which says how it reads a jsonb datum).
macro_rules! jsonb_type {
    ($t:ty, $ident:literal) => {
        // SAFETY: the SQL type is jsonb, which the type's FromDatum reads and IntoDatum produces.
        unsafe impl SqlTranslatable for $t {
            const TYPE_IDENT: &'static str = $ident;
            const TYPE_ORIGIN: pgrx::pgrx_sql_entity_graph::metadata::TypeOrigin =
                pgrx::pgrx_sql_entity_graph::metadata::TypeOrigin::External;
            const ARGUMENT_SQL: Result<SqlMappingRef, ArgumentError> =
                Ok(SqlMappingRef::literal("jsonb"));
            const RETURN_SQL: Result<ReturnsRef, ReturnsError> =
                Ok(ReturnsRef::One(SqlMappingRef::literal("jsonb")));
        }

        // SAFETY: reads the argument through FromDatum, as pgrx does for its own JsonB.
        unsafe impl<'fcx> ArgAbi<'fcx> for $t {
            unsafe fn unbox_arg_unchecked(arg: Arg<'_, 'fcx>) -> Self {
                let index = arg.index();
                // SAFETY: the argument is a jsonb datum of this call.
                unsafe { arg.unbox_arg_using_from_datum() }
                    .unwrap_or_else(|| panic!("argument {index} must not be null"))
            }

            unsafe fn unbox_nullable_arg(arg: Arg<'_, 'fcx>) -> Nullable<Self> {
                // SAFETY: as above.
                unsafe { arg.unbox_arg_using_from_datum() }.into()
            }
        }
    };
}

/// A `jsonb` value as `serde_json::Value`.
#[derive(Debug, Clone)]
pub struct Json(pub Value);

impl FromDatum for Json {
    unsafe fn from_polymorphic_datum(
        datum: pg_sys::Datum,
        is_null: bool,
        _typoid: pg_sys::Oid,
    ) -> Option<Json> {
        if is_null {
            return None;
        }
        // SAFETY: the caller hands us a non-null jsonb datum (this type's SQL type is jsonb);
        // jsonb_out detoasts it itself and returns a palloc'd, NUL-terminated string, which
        // lives until the memory context is reset (we copy what we need out of it at once).
        let text = unsafe {
            pgrx::direct_function_call::<&std::ffi::CStr>(pg_sys::jsonb_out, &[Some(datum)])
        };
        let text = text.map(|t| t.to_string_lossy()).unwrap_or_default();
        Some(Json(
            validate::json_text("jsonb argument", &text).or_raise(),
        ))
    }
}

impl IntoDatum for Json {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        pgrx::JsonB(self.0).into_datum()
    }

    fn type_oid() -> pg_sys::Oid {
        pg_sys::JSONBOID
    }
}

jsonb_type!(Json, "memory_ext::pg::json::Json");

/// A `jsonb` value as the text jsonb prints, not parsed: passed from a query to the caller
/// unchanged (IntoDatum reads it back with jsonb's own parser), so a document that serde_json
/// would refuse (nested deeper than 128 levels, a number beyond f64), which plain SQL can still
/// have written into a row, goes through whole instead of failing the call. [`JsonText::value`]
/// reads it for Rust leniently: one bad value is shown as such, not an error for the whole call.
#[derive(Debug, Clone)]
pub struct JsonText(pub String);

/// What a reader shows in place of a stored value it cannot read (`{"unreadable": reason}`).
pub fn unreadable(reason: &str) -> Value {
    serde_json::json!({ "unreadable": format!("{reason}: the stored value is not shown") })
}

impl JsonText {
    /// The value, or `{"unreadable": reason}` when it is not within the shape every reader
    /// can read (memory_core::validate::json_shape).
    pub fn value(&self) -> Value {
        match validate::json_shape(&self.0) {
            Err(reason) => unreadable(reason),
            Ok(()) => serde_json::from_str(&self.0).unwrap_or_else(|e| unreadable(&e.to_string())),
        }
    }
}

impl FromDatum for JsonText {
    unsafe fn from_polymorphic_datum(
        datum: pg_sys::Datum,
        is_null: bool,
        _typoid: pg_sys::Oid,
    ) -> Option<JsonText> {
        if is_null {
            return None;
        }
        // SAFETY: as for Json above: a non-null jsonb datum, printed by jsonb_out into a
        // palloc'd string that outlives this copy.
        let text = unsafe {
            pgrx::direct_function_call::<&std::ffi::CStr>(pg_sys::jsonb_out, &[Some(datum)])
        };
        Some(JsonText(
            text.map(|t| t.to_string_lossy().into_owned())
                .unwrap_or_default(),
        ))
    }
}

impl IntoDatum for JsonText {
    fn into_datum(self) -> Option<pg_sys::Datum> {
        let text = std::ffi::CString::new(self.0).ok()?;
        // SAFETY: jsonb_in reads a NUL-terminated string (it came from jsonb_out, so it holds
        // no NUL and parses); the result is palloc'd in the current memory context.
        unsafe {
            pgrx::direct_function_call_as_datum(
                pg_sys::jsonb_in,
                &[Some(pg_sys::Datum::from(text.as_ptr()))],
            )
        }
    }

    fn type_oid() -> pg_sys::Oid {
        pg_sys::JSONBOID
    }
}

jsonb_type!(JsonText, "memory_ext::pg::json::JsonText");

// SAFETY: returns the datum IntoDatum builds (jsonb, palloc'd in the function's context), or
// NULL, as pgrx does for its own types.
unsafe impl pgrx::callconv::BoxRet for JsonText {
    unsafe fn box_into<'fcx>(
        self,
        fcinfo: &mut pgrx::callconv::FcInfo<'fcx>,
    ) -> pgrx::datum::Datum<'fcx> {
        match self.into_datum() {
            // SAFETY: a jsonb datum of the current memory context, the function's result.
            Some(datum) => unsafe { fcinfo.return_raw_datum(datum) },
            None => fcinfo.return_null(),
        }
    }
}
