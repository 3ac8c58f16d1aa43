//! Values in and out of both drivers: what a parameter binds ([`Param`] → [`Value`]),
//! what a column reads as ([`Cell`] → [`Column`]), and a result's [`Row`].

use std::borrow::Cow;

use postgres::types::{IsNull, Type, to_sql_checked};

use super::DbError;

/// A value bound to a statement's parameter.
#[derive(Debug, Clone)]
pub enum Value<'a> {
    /// NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A float.
    Real(f64),
    /// Text.
    Text(Cow<'a, str>),
    /// Bytes.
    Blob(&'a [u8]),
}

/// What can be bound to a parameter.
pub trait Param {
    /// As a value.
    fn value(&self) -> Value<'_>;
}

/// A column's value as read.
#[derive(Debug, Clone, Copy)]
pub enum Cell<'a> {
    /// NULL.
    Null,
    /// An integer (or a boolean: 0 and 1).
    Int(i64),
    /// A float.
    Real(f64),
    /// Text.
    Text(&'a str),
    /// Bytes.
    Blob(&'a [u8]),
}

/// What a column can be read as.
pub trait Column: Sized {
    /// From the cell, or why not.
    fn column(cell: Cell<'_>) -> Result<Self, String>;
}

macro_rules! int_param {
    ($($t:ty),*) => {$(
        impl Param for $t {
            fn value(&self) -> Value<'_> {
                Value::Int(i64::try_from(*self).unwrap_or(i64::MAX))
            }
        }
        impl Column for $t {
            fn column(cell: Cell<'_>) -> Result<Self, String> {
                match cell {
                    Cell::Int(i) => <$t>::try_from(i)
                        .map_err(|_| format!("{i} does not fit a {}", stringify!($t))),
                    other => Err(format!("expected an integer, found {other:?}")),
                }
            }
        }
    )*};
}
int_param!(i64, i32, u32, u64, usize, u16);

impl Param for bool {
    fn value(&self) -> Value<'_> {
        Value::Int(i64::from(*self))
    }
}

impl Column for bool {
    fn column(cell: Cell<'_>) -> Result<Self, String> {
        match cell {
            Cell::Int(i) => Ok(i != 0),
            other => Err(format!("expected a boolean, found {other:?}")),
        }
    }
}

impl Param for f64 {
    fn value(&self) -> Value<'_> {
        Value::Real(*self)
    }
}

impl Column for f64 {
    fn column(cell: Cell<'_>) -> Result<Self, String> {
        match cell {
            Cell::Real(f) => Ok(f),
            #[allow(clippy::cast_precision_loss)]
            Cell::Int(i) => Ok(i as f64),
            other => Err(format!("expected a number, found {other:?}")),
        }
    }
}

impl Param for str {
    fn value(&self) -> Value<'_> {
        Value::Text(Cow::Borrowed(self))
    }
}

impl Param for String {
    fn value(&self) -> Value<'_> {
        Value::Text(Cow::Borrowed(self))
    }
}

impl Column for String {
    fn column(cell: Cell<'_>) -> Result<Self, String> {
        match cell {
            Cell::Text(s) => Ok(s.to_string()),
            other => Err(format!("expected text, found {other:?}")),
        }
    }
}

impl Param for [u8] {
    fn value(&self) -> Value<'_> {
        Value::Blob(self)
    }
}

impl Param for Vec<u8> {
    fn value(&self) -> Value<'_> {
        Value::Blob(self)
    }
}

impl Column for Vec<u8> {
    fn column(cell: Cell<'_>) -> Result<Self, String> {
        match cell {
            Cell::Blob(b) => Ok(b.to_vec()),
            Cell::Text(s) => Ok(s.as_bytes().to_vec()),
            other => Err(format!("expected bytes, found {other:?}")),
        }
    }
}

impl<T: Param + ?Sized> Param for &T {
    fn value(&self) -> Value<'_> {
        (**self).value()
    }
}

impl<T: Param> Param for Option<T> {
    fn value(&self) -> Value<'_> {
        self.as_ref().map_or(Value::Null, Param::value)
    }
}

impl<T: Column> Column for Option<T> {
    fn column(cell: Cell<'_>) -> Result<Self, String> {
        match cell {
            Cell::Null => Ok(None),
            c => T::column(c).map(Some),
        }
    }
}

/// One row of a result.
pub struct Row<'r>(pub(super) RowRef<'r>);

pub(super) enum RowRef<'r> {
    Sqlite(&'r rusqlite::Row<'r>),
    Postgres(&'r postgres::Row),
}

impl Row<'_> {
    /// Column `index` (from 0) as `T`.
    pub fn get<T: Column>(&self, index: usize) -> Result<T, DbError> {
        T::column(self.cell(index)?).map_err(|reason| DbError::Column { index, reason })
    }

    /// Column `index` as text, borrowed (`None` for NULL): for readers that reuse
    /// their strings row after row.
    pub fn text(&self, index: usize) -> Result<Option<&str>, DbError> {
        match self.cell(index)? {
            Cell::Null => Ok(None),
            Cell::Text(t) => Ok(Some(t)),
            other => Err(DbError::Column {
                index,
                reason: format!("expected text, found {other:?}"),
            }),
        }
    }

    /// Column `index` as it is.
    pub fn cell(&self, index: usize) -> Result<Cell<'_>, DbError> {
        let wrong = |reason: String| DbError::Column { index, reason };
        match &self.0 {
            RowRef::Sqlite(r) => {
                use rusqlite::types::ValueRef;
                Ok(match r.get_ref(index)? {
                    ValueRef::Null => Cell::Null,
                    ValueRef::Integer(i) => Cell::Int(i),
                    ValueRef::Real(f) => Cell::Real(f),
                    ValueRef::Text(t) => Cell::Text(
                        std::str::from_utf8(t).map_err(|e| wrong(format!("not UTF-8: {e}")))?,
                    ),
                    ValueRef::Blob(b) => Cell::Blob(b),
                })
            }
            RowRef::Postgres(r) => {
                let ty = r
                    .columns()
                    .get(index)
                    .ok_or_else(|| wrong("no such column".into()))?
                    .type_();
                let int = |v: Option<i64>| v.map_or(Cell::Null, Cell::Int);
                Ok(match *ty {
                    Type::INT8 => int(r.try_get::<_, Option<i64>>(index)?),
                    Type::INT4 => int(r.try_get::<_, Option<i32>>(index)?.map(i64::from)),
                    Type::INT2 => int(r.try_get::<_, Option<i16>>(index)?.map(i64::from)),
                    Type::BOOL => int(r.try_get::<_, Option<bool>>(index)?.map(i64::from)),
                    Type::FLOAT8 => r
                        .try_get::<_, Option<f64>>(index)?
                        .map_or(Cell::Null, Cell::Real),
                    Type::FLOAT4 => r
                        .try_get::<_, Option<f32>>(index)?
                        .map_or(Cell::Null, |f| Cell::Real(f64::from(f))),
                    Type::BYTEA => r
                        .try_get::<_, Option<&[u8]>>(index)?
                        .map_or(Cell::Null, Cell::Blob),
                    Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => r
                        .try_get::<_, Option<&str>>(index)?
                        .map_or(Cell::Null, Cell::Text),
                    ref other => {
                        return Err(wrong(format!(
                            "PostgreSQL type {other} is not read by plikt (cast it in the query)"
                        )));
                    }
                })
            }
        }
    }
}

/// Binding for rusqlite.
pub(super) struct Bind<'a>(pub(super) Value<'a>);

impl rusqlite::ToSql for Bind<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(match &self.0 {
            Value::Null => ToSqlOutput::Borrowed(ValueRef::Null),
            Value::Int(i) => ToSqlOutput::Borrowed(ValueRef::Integer(*i)),
            Value::Real(f) => ToSqlOutput::Borrowed(ValueRef::Real(*f)),
            Value::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
            Value::Blob(b) => ToSqlOutput::Borrowed(ValueRef::Blob(b)),
        })
    }
}

/// Binding for PostgreSQL: the value takes the type the server inferred for the
/// parameter (an integer into `INTEGER` or `BIGINT` alike).
impl postgres::types::ToSql for Value<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => match *ty {
                Type::INT8 => i.to_sql(ty, out),
                Type::INT4 => i32::try_from(*i)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(*i)?.to_sql(ty, out),
                Type::BOOL => (*i != 0).to_sql(ty, out),
                #[allow(clippy::cast_precision_loss)]
                Type::FLOAT8 => (*i as f64).to_sql(ty, out),
                _ => i.to_string().as_str().to_sql(ty, out),
            },
            Value::Real(f) => f.to_sql(ty, out),
            Value::Text(t) => t.as_ref().to_sql(ty, out),
            Value::Blob(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}
