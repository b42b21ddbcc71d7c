//! Writing manifests as YAML, fast.
//!
//! A serde serializer for the compilers' typed models: block style as
//! `kubectl` shows it (sequences at their key's indentation), strings plain
//! only when no YAML 1.1 or 1.2 reader could take them for anything else,
//! single-quoted otherwise, double-quoted with escapes when they hold
//! control characters, and literal blocks (`|`) for multi-line text. It
//! exists for speed: serde-saphyr (which reads every YAML a tenant sends)
//! spent two thirds of a 10,000-step compile writing, serde_yaml_ng more;
//! this writes straight into one `String` (see the compile benchmark). What
//! it writes is read back by serde-saphyr and the engines' own validators
//! in the compile tests.

use serde::ser::{self, Serialize};
use std::fmt::{self, Write};

mod scalar;
mod small_map;

use scalar::{quote_key_written, write_key, write_string};
pub use small_map::SmallMap;

#[derive(Debug)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

/// `value` as one YAML document (no `---`), ending in a newline.
pub fn to_string(value: &impl Serialize) -> Result<String, Error> {
    let mut out = String::new();
    write(&mut out, value)?;
    Ok(out)
}

/// Appends `value` as one YAML document to `out`.
pub fn write(out: &mut String, value: &impl Serialize) -> Result<(), Error> {
    value.serialize(Emitter { out, at: At::Root })
}

/// Where the next value goes.
#[derive(Clone, Copy)]
enum At {
    /// The document itself.
    Root,
    /// After `key:` at this indentation.
    Value(usize),
    /// After `- ` at this indentation.
    Item(usize),
}

struct Emitter<'o> {
    out: &'o mut String,
    at: At,
}

pub(super) fn indent(out: &mut String, n: usize) {
    const SPACES: &str = "                                                                ";
    let mut n = n;
    while n > SPACES.len() {
        out.push_str(SPACES);
        n -= SPACES.len();
    }
    out.push_str(&SPACES[..n]);
}

impl<'o> Emitter<'o> {
    fn scalar(self, text: &str) -> Result<(), Error> {
        match self.at {
            At::Value(_) => self.out.push(' '),
            At::Root | At::Item(_) => {}
        }
        self.out.push_str(text);
        self.out.push('\n');
        Ok(())
    }

    /// A number, written straight into the output.
    fn display(self, v: impl fmt::Display) -> Result<(), Error> {
        match self.at {
            At::Value(_) => self.out.push(' '),
            At::Root | At::Item(_) => {}
        }
        let _ = write!(self.out, "{v}");
        self.out.push('\n');
        Ok(())
    }

    fn string(self, s: &str) -> Result<(), Error> {
        let block_indent = match self.at {
            At::Root => 0,
            At::Value(n) => n + 2,
            At::Item(n) => n + 2,
        };
        if let At::Value(_) = self.at {
            self.out.push(' ');
        }
        write_string(self.out, s, block_indent);
        self.out.push('\n');
        Ok(())
    }

    fn map(self) -> Compound<'o> {
        let (first, indent) = match self.at {
            At::Root => (First::Inline, 0),
            At::Value(n) => (First::NewLine, n + 2),
            At::Item(n) => (First::Inline, n + 2),
        };
        Compound {
            out: self.out,
            indent,
            first,
            empty: true,
            at: self.at,
        }
    }

    fn seq(self) -> Compound<'o> {
        let (first, indent) = match self.at {
            At::Root => (First::Inline, 0),
            // Sequences sit at their key's indentation, as kubectl writes.
            At::Value(n) => (First::NewLine, n),
            At::Item(n) => (First::Inline, n + 2),
        };
        Compound {
            out: self.out,
            indent,
            first,
            empty: true,
            at: self.at,
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum First {
    /// The first entry goes where the cursor is (after `- `, or at the
    /// start of the document).
    Inline,
    /// The first entry starts a new line.
    NewLine,
}

/// A map, struct or sequence being written.
struct Compound<'o> {
    out: &'o mut String,
    indent: usize,
    first: First,
    empty: bool,
    at: At,
}

impl Compound<'_> {
    /// Positions the cursor for the next entry.
    fn next_entry(&mut self) {
        if self.empty && self.first == First::Inline {
            self.empty = false;
            return;
        }
        if self.empty {
            self.out.push('\n');
        }
        self.empty = false;
        indent(self.out, self.indent);
    }

    fn key(&mut self, key: &str) {
        self.next_entry();
        write_key(self.out, key);
        self.out.push(':');
    }

    fn item(&mut self) {
        self.next_entry();
        self.out.push_str("- ");
    }

    fn end(self, empty: &str) {
        if self.empty {
            match self.at {
                At::Value(_) => self.out.push(' '),
                At::Root | At::Item(_) => {}
            }
            self.out.push_str(empty);
            self.out.push('\n');
        }
    }
}

impl<'o> ser::Serializer for Emitter<'o> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'o>;
    type SerializeTuple = Compound<'o>;
    type SerializeTupleStruct = Compound<'o>;
    type SerializeTupleVariant = Variant<'o>;
    type SerializeMap = MapCompound<'o>;
    type SerializeStruct = Compound<'o>;
    type SerializeStructVariant = Variant<'o>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.scalar(if v { "true" } else { "false" })
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.serialize_i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.display(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.serialize_u64(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.serialize_u64(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.serialize_u64(v.into())
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.display(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        self.serialize_f64(v.into())
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        if v.is_nan() {
            self.scalar(".nan")
        } else if v.is_infinite() {
            self.scalar(if v > 0.0 { ".inf" } else { "-.inf" })
        } else if v.fract() == 0.0 && v.abs() < 1e15 {
            self.display(format_args!("{v:.1}"))
        } else {
            self.display(format_args!("{v:?}"))
        }
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.string(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.string(v)
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Error> {
        Err(Error("bytes have no YAML form here".into()))
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.scalar("null")
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.scalar("null")
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.scalar("null")
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.string(variant)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        let mut map = self.map();
        map.key(variant);
        let at = At::Value(map.indent);
        value.serialize(Emitter { out: map.out, at })?;
        map.end("{}");
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'o>, Error> {
        Ok(self.seq())
    }
    fn serialize_tuple(self, _: usize) -> Result<Compound<'o>, Error> {
        Ok(self.seq())
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Compound<'o>, Error> {
        Ok(self.seq())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Variant<'o>, Error> {
        Variant::open(self, variant, true)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<MapCompound<'o>, Error> {
        Ok(MapCompound { inner: self.map() })
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Compound<'o>, Error> {
        Ok(self.map())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Variant<'o>, Error> {
        Variant::open(self, variant, false)
    }
}

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.item();
        let at = At::Item(self.indent);
        value.serialize(Emitter { out: self.out, at })
    }
    fn end(self) -> Result<(), Error> {
        Compound::end(self, "[]");
        Ok(())
    }
}

impl ser::SerializeTuple for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<(), Error> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<(), Error> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.key(key);
        let at = At::Value(self.indent);
        value.serialize(Emitter { out: self.out, at })
    }
    fn end(self) -> Result<(), Error> {
        Compound::end(self, "{}");
        Ok(())
    }
}

/// A map; its keys are written in place (as they come, then quoted if
/// they must be), which spares a buffer per map.
struct MapCompound<'o> {
    inner: Compound<'o>,
}

impl ser::SerializeMap for MapCompound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), Error> {
        self.inner.next_entry();
        let start = self.inner.out.len();
        key.serialize(KeyWriter(self.inner.out))?;
        quote_key_written(self.inner.out, start);
        self.inner.out.push(':');
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        let at = At::Value(self.inner.indent);
        value.serialize(Emitter {
            out: self.inner.out,
            at,
        })
    }
    fn end(self) -> Result<(), Error> {
        self.inner.end("{}");
        Ok(())
    }
}

/// `variant:` then the variant's fields or elements.
struct Variant<'o> {
    outer: Compound<'o>,
    inner_indent: usize,
    seq: bool,
    empty: bool,
}

impl<'o> Variant<'o> {
    fn open(e: Emitter<'o>, variant: &str, seq: bool) -> Result<Variant<'o>, Error> {
        let mut outer = e.map();
        outer.key(variant);
        let inner_indent = if seq { outer.indent } else { outer.indent + 2 };
        Ok(Variant {
            outer,
            inner_indent,
            seq,
            empty: true,
        })
    }

    fn entry(&mut self) {
        if self.empty {
            self.outer.out.push('\n');
        }
        self.empty = false;
        indent(self.outer.out, self.inner_indent);
    }

    fn finish(self) {
        if self.empty {
            self.outer
                .out
                .push_str(if self.seq { " []\n" } else { " {}\n" });
        }
    }
}

impl ser::SerializeTupleVariant for Variant<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.entry();
        self.outer.out.push_str("- ");
        let at = At::Item(self.inner_indent);
        value.serialize(Emitter {
            out: self.outer.out,
            at,
        })
    }
    fn end(self) -> Result<(), Error> {
        self.finish();
        Ok(())
    }
}

impl ser::SerializeStructVariant for Variant<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.entry();
        write_key(self.outer.out, key);
        self.outer.out.push(':');
        let at = At::Value(self.inner_indent);
        value.serialize(Emitter {
            out: self.outer.out,
            at,
        })
    }
    fn end(self) -> Result<(), Error> {
        self.finish();
        Ok(())
    }
}

fn not_scalar<T>() -> Result<T, Error> {
    Err(Error("a map key must be a scalar".into()))
}

/// Map keys: scalars only, written as they are to the end of a string.
struct KeyWriter<'k>(&'k mut String);

impl KeyWriter<'_> {
    fn text(self, s: &str) -> Result<(), Error> {
        self.0.push_str(s);
        Ok(())
    }
}

macro_rules! key_display {
    ($($f:ident: $t:ty),*) => {
        $(fn $f(self, v: $t) -> Result<(), Error> {
            self.text(&v.to_string())
        })*
    };
}

impl ser::Serializer for KeyWriter<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    key_display!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_f32: f32, serialize_f64: f64, serialize_char: char);

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.text(v)
    }
    /// Written straight into the key buffer (no string in between).
    fn collect_str<T: ?Sized + fmt::Display>(self, value: &T) -> Result<(), Error> {
        let _ = write!(self.0, "{value}");
        Ok(())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Error> {
        not_scalar()
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.text("null")
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.text("null")
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.text("null")
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, v: &'static str) -> Result<(), Error> {
        self.text(v)
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        not_scalar()
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        not_scalar()
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        not_scalar()
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        not_scalar()
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        not_scalar()
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        not_scalar()
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        not_scalar()
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        not_scalar()
    }
}

#[cfg(test)]
mod tests;
