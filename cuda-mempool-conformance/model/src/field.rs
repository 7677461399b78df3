//! The model's two field shapes beyond plain serde: a field that may be absent or null, and the
//! keys a part of the report has that the model does not name.

use serde::{Deserialize, Deserializer};

/// A field some reports lack (those written before it existed) and others write as null: `None`
/// where the report lacks it, `Some(None)` where it is null, so that both read back as they were.
/// Declared with `#[serde(default, deserialize_with = "nullable", skip_serializing_if =
/// "Option::is_none")]`.
pub type Nullable<T> = Option<Option<T>>;

/// Reads a [`Nullable`] field that is present: null as `Some(None)`.
pub fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Nullable<T>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// The keys of an object that its type does not name, as they were (`#[serde(flatten)]`): nothing
/// a newer writer adds is lost by a reader that does not know it.
pub type Extra = serde_json::Map<String, serde_json::Value>;
