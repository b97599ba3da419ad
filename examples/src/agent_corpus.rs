//! A corpus of Rust input types for agent exports: one capability per type, with a valid
//! example input, a serde round trip, and a handler, plus every capability of the polls
//! example and of the example relationship packages.
//!
//! The types cover what schemars and serde make of everyday Rust: options, defaults, unit,
//! externally, internally, adjacently tagged and untagged enums, nested structs, maps, sets,
//! vectors with bounds, every integer width (`i8` .. `i64`, `u8` .. `u64`, `isize`, `usize`,
//! with their exact 64-bit bounds), floats, `uuid::Uuid`, chrono dates and date-times, strings
//! with lengths and patterns, newtypes, `Box`, tuples, `char`, `bool`, renamed fields and
//! variants (keys with `-` and `.`), `#[serde(flatten)]` of a struct and an empty input. Every
//! input of [`corpus`] is an object (what agent tool schemas need), and every struct but the
//! flattening ones has `#[serde(deny_unknown_fields)]`, so its schema accepts exactly what
//! serde accepts.
//!
//! * [`corpus`]: the corpus capabilities alone, [`full_corpus`]: with the polls example's
//!   catalog and the `hiring` relationship package (the `polls` package is in the polls
//!   catalog already); [`edge_corpus`]: a few inputs that some agent tool schemas cannot
//!   take (not objects, or closed with `unevaluatedProperties`);
//! * [`example_input`] and [`example_inputs`]: valid inputs of each corpus capability (also
//!   its usage examples);
//! * [`reparse`]: the input deserialized into the capability's Rust type and serialized back
//!   (serde's canonical form of it), and [`same_rust_value`]: whether two inputs parse into
//!   equal Rust values (sets and maps compared as Rust compares them);
//! * [`handle`]: the output a corpus capability answers with, for a runtime serving it.
//!
//! ```
//! use rcip_examples::agent_corpus::{ALL_IDS, corpus, edge_corpus, example_input, reparse};
//!
//! let objects = corpus().capabilities.len();
//! assert!(objects >= 50);
//! assert_eq!(objects + edge_corpus().capabilities.len(), ALL_IDS.len());
//! let example = example_input("corpus.uuid_fields").unwrap();
//! assert_eq!(reparse("corpus.uuid_fields", &example), Some(Ok(example)));
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use chrono::{DateTime, NaiveDate, Utc};
use rcip_runtime::rcip_core::SchemaRole;
use rcip_runtime::rcip_core::schema::{SchemaGenerationError, strict_schema_for};
use rcip_runtime::{
    ApplicationDefinition, CapabilityDefinition, Effect, ScopeDefinition, UsageGuidance,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

/// The relationship programs of `programs/`, compiled by `build.rs`.
mod programs {
    rcip_relationship::include_programs!();
}

/// The polls example's catalog, as `cargo run --example polls -- export` prints it (a test of
/// the examples keeps this file equal to the export).
const POLLS_CATALOG: &str = include_str!("../polls.catalog.json");

// ---------------------------------------------------------------------------------------------
// The types
// ---------------------------------------------------------------------------------------------

/// Optional fields of several shapes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionFields {
    /// A required text.
    pub name: String,
    /// An optional text.
    pub nickname: Option<String>,
    /// An optional number.
    pub age: Option<u8>,
    /// An optional nested object.
    pub address: Option<Address>,
    /// An optional unit enum.
    pub color: Option<Color>,
}

/// A postal address.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Address {
    /// Street and number.
    #[schemars(length(min = 1, max = 200))]
    pub street: String,
    /// City.
    pub city: String,
    /// ISO 3166-1 alpha-2 country code.
    #[schemars(regex(pattern = r"^[A-Z]{2}$"))]
    pub country: String,
}

/// Optional fields left out of the output when absent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkippedOptions {
    /// A title.
    pub title: String,
    /// Only written when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtitle: Option<String>,
    /// Only written when set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<i32>,
}

/// Fields with serde defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DefaultFields {
    /// The query.
    pub query: String,
    /// Page size, 20 by default.
    #[serde(default = "default_limit")]
    pub limit: u32,
    /// Whether archived items count; false by default.
    #[serde(default)]
    pub include_archived: bool,
    /// Tags to match; none by default.
    #[serde(default)]
    pub tags: Vec<String>,
}

fn default_limit() -> u32 {
    20
}

/// A struct whose every field has a default (`#[serde(default)]` on the container).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ContainerDefault {
    /// Sort order.
    pub ascending: bool,
    /// Offset.
    pub offset: u64,
    /// Label.
    pub label: String,
}

impl Default for ContainerDefault {
    fn default() -> Self {
        ContainerDefault {
            ascending: true,
            offset: 0,
            label: "all".to_owned(),
        }
    }
}

/// A color.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Color {
    /// Red.
    Red,
    /// Green.
    Green,
    /// Dark blue.
    DarkBlue,
}

/// A size. Its variants have no doc comments: schemars writes an undocumented unit enum as
/// `enum`, a documented one ([`Color`]) as a `oneOf` of `const`s with descriptions.
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum Size {
    Small,
    Medium,
    Large,
}

/// Unit enums as fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnitEnumField {
    /// The chosen color.
    pub color: Color,
    /// The size.
    pub size: Size,
    /// Other colors.
    pub others: Vec<Color>,
}

/// A priority, with renamed variants.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub enum Priority {
    /// Low.
    #[serde(rename = "low")]
    Low,
    /// Normal.
    #[serde(rename = "normal-priority")]
    Normal,
    /// Urgent.
    #[serde(rename = "URGENT")]
    Urgent,
}

/// Renamed unit variants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RenamedVariants {
    /// The priority.
    pub priority: Priority,
}

/// A shape: serde's default, externally tagged, representation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Shape {
    /// A circle.
    Circle {
        /// Radius.
        radius: f64,
    },
    /// A rectangle.
    Rectangle {
        /// Width.
        width: f64,
        /// Height.
        height: f64,
    },
    /// A square, by its side (a newtype variant).
    Square(f64),
    /// A point (a unit variant: the string `"point"`).
    Point,
}

/// An externally tagged enum as a field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExternalEnum {
    /// The shape to draw.
    pub shape: Shape,
}

/// An event, internally tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Event {
    /// A click.
    Click {
        /// Horizontal position.
        x: i32,
        /// Vertical position.
        y: i32,
    },
    /// A key press.
    Key {
        /// The key.
        key: char,
        /// Whether shift was held.
        shift: bool,
    },
    /// Focus moved away.
    Blur,
}

/// An internally tagged enum as a field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InternalEnum {
    /// What happened.
    pub event: Event,
}

/// An internally tagged enum at the root of the input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "action", rename_all = "camelCase", deny_unknown_fields)]
pub enum RootTagged {
    /// Opens a document.
    Open {
        /// The document.
        document_id: String,
    },
    /// Closes a document, maybe saving it.
    Close {
        /// The document.
        document_id: String,
        /// Whether to save first.
        save: bool,
    },
}

/// A message, adjacently tagged (`kind` and `body`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "kind",
    content = "body",
    rename_all = "snake_case",
    deny_unknown_fields
)]
pub enum Message {
    /// A text.
    Text(String),
    /// A count.
    Count(u32),
    /// A location.
    Location {
        /// Latitude.
        lat: f64,
        /// Longitude.
        lon: f64,
    },
    /// Nothing.
    Empty,
}

/// An adjacently tagged enum as a field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdjacentEnum {
    /// The message.
    pub message: Message,
}

/// A value given one of several ways (untagged: the first variant that fits).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged, deny_unknown_fields)]
pub enum Amount {
    /// A whole number of cents.
    Cents(i64),
    /// A decimal string, e.g. `"12.50"`.
    Decimal(#[schemars(regex(pattern = r"^-?[0-9]+\.[0-9]{2}$"))] String),
    /// A value with its currency.
    WithCurrency {
        /// The value, in cents.
        cents: i64,
        /// ISO 4217 code.
        #[schemars(length(min = 3, max = 3))]
        currency: String,
    },
}

/// An untagged enum as a field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UntaggedEnum {
    /// The amount.
    pub amount: Amount,
    /// More amounts.
    pub more: Vec<Amount>,
}

/// Nested structs three levels deep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NestedStructs {
    /// The order.
    pub order: Order,
}

/// An order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Order {
    /// The customer.
    pub customer: Customer,
    /// The lines.
    #[schemars(length(min = 1, max = 50))]
    pub lines: Vec<OrderLine>,
}

/// A customer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Customer {
    /// The customer's id.
    pub id: Uuid,
    /// Where to ship.
    pub address: Address,
}

/// An order line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderLine {
    /// Stock keeping unit.
    pub sku: String,
    /// How many.
    #[schemars(range(min = 1, max = 1000))]
    pub quantity: u16,
}

/// A string-keyed map of numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StringMap {
    /// Counts by name.
    pub counts: HashMap<String, u32>,
}

/// A `BTreeMap<String, T>` of structs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StructMap {
    /// Addresses by label.
    pub addresses: BTreeMap<String, Address>,
}

/// Maps nested in maps, and a map of lists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NestedMaps {
    /// Scores by team, then by player.
    pub scores: BTreeMap<String, BTreeMap<String, i32>>,
    /// Members by group.
    pub members: BTreeMap<String, Vec<String>>,
}

/// A map keyed by a unit enum: every key is an optional property.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnumKeyedMap {
    /// Stock by color.
    pub stock: BTreeMap<Color, u32>,
}

/// Vectors with bounds on their length and on their items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BoundedVectors {
    /// One to five labels, each 1 to 32 characters.
    #[schemars(length(min = 1, max = 5), inner(length(min = 1, max = 32)))]
    pub labels: Vec<String>,
    /// At most ten scores, each 0 to 100.
    #[schemars(length(max = 10), inner(range(min = 0, max = 100)))]
    pub scores: Vec<u8>,
    /// Any number of numbers.
    pub readings: Vec<f64>,
}

/// Vectors of vectors and of optional items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NestedVectors {
    /// A grid of cells.
    pub grid: Vec<Vec<i16>>,
    /// Optional slots.
    pub slots: Vec<Option<String>>,
    /// A list of objects.
    pub lines: Vec<OrderLine>,
}

/// Sets.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sets {
    /// A hash set (`uniqueItems`).
    pub tags: HashSet<String>,
    /// An ordered set.
    pub ids: BTreeSet<u32>,
}

/// Signed integers of every width.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SignedIntegers {
    /// `i8`.
    pub a: i8,
    /// `i16`.
    pub b: i16,
    /// `i32`.
    pub c: i32,
    /// `i64`.
    pub d: i64,
    /// `isize`.
    pub e: isize,
}

/// Unsigned integers of every width.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnsignedIntegers {
    /// `u8`.
    pub a: u8,
    /// `u16`.
    pub b: u16,
    /// `u32`.
    pub c: u32,
    /// `u64`.
    pub d: u64,
    /// `usize`.
    pub e: usize,
}

/// 64-bit integers at their extremes (beyond JavaScript's 2^53).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WideIntegers {
    /// An `i64` (bounds `i64::MIN` and `i64::MAX`).
    pub signed: i64,
    /// A `u64` (bounds 0 and `u64::MAX`).
    pub unsigned: u64,
    /// A `usize`.
    pub size: usize,
    /// An optional `u64`.
    pub maybe: Option<u64>,
}

/// Integers with explicit ranges.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IntegerRanges {
    /// 1 to 10.
    #[schemars(range(min = 1, max = 10))]
    pub rating: u8,
    /// -50 to 50.
    #[schemars(range(min = -50, max = 50))]
    pub offset: i32,
    /// At least 1.
    #[schemars(range(min = 1))]
    pub page: u64,
}

/// Floats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Floats {
    /// An `f32`.
    pub ratio: f32,
    /// An `f64`.
    pub value: f64,
    /// A probability, 0 to 1.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub probability: f64,
    /// An optional float.
    pub weight: Option<f64>,
}

/// UUIDs (`format: uuid`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UuidFields {
    /// The item.
    pub id: Uuid,
    /// Its parent, if any.
    pub parent: Option<Uuid>,
    /// Related items.
    pub related: Vec<Uuid>,
}

/// Date-times (`format: date-time`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DateTimes {
    /// When it starts.
    pub starts_at: DateTime<Utc>,
    /// When it ends, if known.
    pub ends_at: Option<DateTime<Utc>>,
}

/// Dates (`format: date`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Dates {
    /// The first day.
    pub from: NaiveDate,
    /// The last day.
    pub to: NaiveDate,
    /// Holidays in between.
    pub holidays: Vec<NaiveDate>,
}

/// E-mail addresses and URIs (`format: email`, `format: uri`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmailAndUri {
    /// Where to write.
    #[schemars(extend("format" = "email"))]
    pub email: String,
    /// A home page.
    #[schemars(extend("format" = "uri"))]
    pub homepage: Option<String>,
}

/// Strings with length bounds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BoundedStrings {
    /// 1 to 64 characters.
    #[schemars(length(min = 1, max = 64))]
    pub title: String,
    /// At most 2000 characters.
    #[schemars(length(max = 2000))]
    pub body: String,
    /// Exactly 6 characters.
    #[schemars(length(equal = 6))]
    pub code: String,
}

/// Strings with patterns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatternStrings {
    /// A slug.
    #[schemars(regex(pattern = r"^[a-z0-9]+(-[a-z0-9]+)*$"))]
    pub slug: String,
    /// A hex color.
    #[schemars(regex(pattern = r"^#[0-9a-fA-F]{6}$"))]
    pub color: String,
    /// A semantic version, 1 to 32 characters.
    #[schemars(length(min = 1, max = 32), regex(pattern = r"^\d+\.\d+\.\d+$"))]
    pub version: String,
}

/// A newtype around a string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UserId(#[schemars(length(min = 1, max = 40))] pub String);

/// A newtype around a number.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Cents(pub i64);

/// Newtypes as fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Newtypes {
    /// The payer.
    pub payer: UserId,
    /// The amount.
    pub amount: Cents,
    /// Optional refund.
    pub refund: Option<Cents>,
}

/// Boxed fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Boxed {
    /// A boxed struct.
    pub address: Box<Address>,
    /// A boxed string.
    pub note: Box<str>,
    /// An optional boxed enum.
    pub shape: Option<Box<Shape>>,
}

/// An empty input: the capability takes no arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmptyInput {}

/// A unit struct as a field (it is `null` in JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Marker;

/// Unit values as fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnitFields {
    /// A label.
    pub label: String,
    /// A unit struct (`null`).
    pub marker: Marker,
}

/// camelCase field names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CamelCase {
    /// First name.
    pub first_name: String,
    /// Last name.
    pub last_name: String,
    /// Optional middle name.
    pub middle_name: Option<String>,
    /// Date of birth.
    pub date_of_birth: NaiveDate,
}

/// Keys that are not identifiers: `-` and `.` in names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OddKeys {
    /// A dashed key.
    #[serde(rename = "a-b")]
    pub a_b: String,
    /// A dotted key.
    #[serde(rename = "x.y")]
    pub x_y: u32,
    /// A key with a space and a slash.
    #[serde(rename = "per cent/total")]
    pub per_cent: f64,
    /// A key with a tilde.
    #[serde(rename = "~home")]
    pub home: bool,
}

/// kebab-case and SCREAMING_SNAKE_CASE names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct KebabCase {
    /// Kebab.
    pub max_retry_count: u8,
    /// Kebab, nested with another case.
    pub http_headers: ScreamingHeaders,
}

/// SCREAMING_SNAKE_CASE names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE", deny_unknown_fields)]
pub struct ScreamingHeaders {
    /// A header.
    pub content_type: String,
    /// Another.
    pub accept_language: Option<String>,
}

/// Paging, flattened into [`FlattenStruct`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Paging {
    /// Page number.
    pub page: u32,
    /// Page size.
    #[schemars(range(min = 1, max = 100))]
    pub per_page: u8,
}

/// `#[serde(flatten)]` of a struct: its fields sit beside the others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FlattenStruct {
    /// The query.
    pub query: String,
    /// Paging.
    #[serde(flatten)]
    pub paging: Paging,
}

/// `#[serde(flatten)]` of an internally tagged enum: the tag and the variant's fields sit
/// beside the others (the schema closes the object with `unevaluatedProperties: false`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FlattenEnum {
    /// What is shared.
    pub name: String,
    /// With whom.
    #[serde(flatten)]
    pub target: Target,
}

/// Whom something is shared with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "target_type", rename_all = "snake_case")]
pub enum Target {
    /// One user.
    User {
        /// The user.
        user_id: String,
    },
    /// A group.
    Group {
        /// The group.
        group_id: String,
        /// Whether subgroups are included.
        recursive: bool,
    },
}

/// Tuples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tuples {
    /// A pair.
    pub pair: (String, u8),
    /// A point.
    pub point: (f64, f64, f64),
    /// A list of pairs.
    pub ranges: Vec<(u32, u32)>,
}

/// A tuple struct as a field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Rgb(pub u8, pub u8, pub u8);

/// Tuple structs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TupleStructs {
    /// A color.
    pub color: Rgb,
    /// A palette.
    pub palette: Vec<Rgb>,
}

/// Characters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Chars {
    /// A separator.
    pub separator: char,
    /// An optional quote character.
    pub quote: Option<char>,
}

/// Booleans.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Booleans {
    /// Whether it is on.
    pub enabled: bool,
    /// A tri-state.
    pub verified: Option<bool>,
    /// Flags.
    pub flags: Vec<bool>,
}

/// A single-field input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SingleField {
    /// The id.
    pub id: String,
}

/// Many fields (wide objects).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ManyFields {
    /// 1.
    pub f01: String,
    /// 2.
    pub f02: String,
    /// 3.
    pub f03: i32,
    /// 4.
    pub f04: i32,
    /// 5.
    pub f05: bool,
    /// 6.
    pub f06: bool,
    /// 7.
    pub f07: f64,
    /// 8.
    pub f08: f64,
    /// 9.
    pub f09: Option<String>,
    /// 10.
    pub f10: Option<String>,
    /// 11.
    pub f11: Vec<String>,
    /// 12.
    pub f12: Color,
}

/// Many optional fields (over Anthropic's 24-optional limit when every one counts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ManyOptionals {
    /// o1.
    pub o01: Option<String>,
    /// o2.
    pub o02: Option<String>,
    /// o3.
    pub o03: Option<String>,
    /// o4.
    pub o04: Option<String>,
    /// o5.
    pub o05: Option<String>,
    /// o6.
    pub o06: Option<String>,
    /// o7.
    pub o07: Option<String>,
    /// o8.
    pub o08: Option<String>,
    /// o9.
    pub o09: Option<i32>,
    /// o10.
    pub o10: Option<i32>,
    /// o11.
    pub o11: Option<i32>,
    /// o12.
    pub o12: Option<i32>,
    /// o13.
    pub o13: Option<bool>,
    /// o14.
    pub o14: Option<bool>,
    /// o15.
    pub o15: Option<bool>,
    /// o16.
    pub o16: Option<bool>,
    /// o17.
    pub o17: Option<f64>,
    /// o18.
    pub o18: Option<f64>,
    /// o19.
    pub o19: Option<f64>,
    /// o20.
    pub o20: Option<f64>,
    /// o21.
    pub o21: Option<u8>,
    /// o22.
    pub o22: Option<u8>,
    /// o23.
    pub o23: Option<u8>,
    /// o24.
    pub o24: Option<u8>,
    /// o25.
    pub o25: Option<Color>,
    /// o26.
    pub o26: Option<Color>,
}

/// Optional enums and optional lists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionalComposites {
    /// An optional tagged enum.
    pub event: Option<Event>,
    /// An optional list.
    pub items: Option<Vec<String>>,
    /// An optional map.
    pub meta: Option<BTreeMap<String, String>>,
    /// An optional tuple.
    pub span: Option<(u32, u32)>,
}

/// Documentation everywhere: titles and descriptions from doc comments.
///
/// The struct's own description is two paragraphs long.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Documented input")]
pub struct Documented {
    /// The recipient.
    ///
    /// Either a user id or an e-mail address.
    #[schemars(title = "Recipient")]
    pub to: String,
    /// The subject, quoted "like this" and with a `code` span.
    pub subject: String,
}

/// A send request, for an external capability.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendNotification {
    /// Recipients' e-mail addresses, 1 to 10.
    #[schemars(length(min = 1, max = 10))]
    pub to: Vec<EmailAddress>,
    /// The channel.
    pub channel: Channel,
    /// The text.
    #[schemars(length(min = 1, max = 500))]
    pub text: String,
    /// When to send; now if absent.
    pub send_at: Option<DateTime<Utc>>,
}

/// An e-mail address (a newtype carrying `format: email`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("format" = "email"))]
pub struct EmailAddress(pub String);

/// A delivery channel.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Channel {
    /// E-mail.
    Email,
    /// A text message.
    Sms,
    /// A push notification.
    Push,
}

/// A delete request, for a destructive capability.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteItems {
    /// The items, 1 to 100 distinct ids.
    #[schemars(length(min = 1, max = 100))]
    pub ids: BTreeSet<Uuid>,
    /// Why.
    pub reason: Option<String>,
    /// Whether to skip the trash.
    #[serde(default)]
    pub permanent: bool,
}

/// A filter with a nested internally tagged enum of conditions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchFilter {
    /// Conditions, all of which must hold.
    #[schemars(length(max = 20))]
    pub all: Vec<Condition>,
    /// The sort.
    pub sort: Option<Sort>,
}

/// A condition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Condition {
    /// Equality.
    Eq {
        /// The field.
        field: String,
        /// The value.
        value: String,
    },
    /// A numeric range.
    Between {
        /// The field.
        field: String,
        /// Lower bound.
        min: f64,
        /// Upper bound.
        max: f64,
    },
    /// Presence.
    Exists {
        /// The field.
        field: String,
    },
}

/// A sort.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sort {
    /// The field.
    pub field: String,
    /// The direction.
    pub direction: Direction,
}

/// A direction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Ascending.
    Asc,
    /// Descending.
    Desc,
}

/// An enum whose variants hold structs, vectors and options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub enum Payment {
    /// By card.
    Card {
        /// The last four digits.
        #[schemars(regex(pattern = r"^[0-9]{4}$"))]
        last4: String,
        /// Expiry month.
        #[schemars(range(min = 1, max = 12))]
        exp_month: u8,
    },
    /// By bank transfer.
    BankTransfer {
        /// IBAN.
        iban: String,
        /// Optional reference.
        reference: Option<String>,
    },
    /// Split over several payments.
    Split(Vec<Cents>),
}

/// Enum variants with data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RichEnum {
    /// The payment.
    pub payment: Payment,
}

/// A schedule: dates, times and a repeat rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Schedule {
    /// The first occurrence.
    pub first_at: DateTime<Utc>,
    /// Repeat.
    pub repeat: Repeat,
    /// Days skipped.
    #[serde(default)]
    pub skip: Vec<NaiveDate>,
}

/// A repeat rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "every", rename_all = "camelCase", deny_unknown_fields)]
pub enum Repeat {
    /// Never.
    Never,
    /// Every n days.
    Days {
        /// n.
        #[schemars(range(min = 1, max = 365))]
        n: u16,
    },
    /// Weekly on some days.
    Weekly {
        /// Day numbers, Monday is 1.
        #[schemars(length(min = 1, max = 7), inner(range(min = 1, max = 7)))]
        days: Vec<u8>,
    },
}

/// Key-value settings whose values are a tagged union.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Settings by key.
    pub values: BTreeMap<String, SettingValue>,
}

/// A setting's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    content = "value",
    rename_all = "lowercase",
    deny_unknown_fields
)]
pub enum SettingValue {
    /// A flag.
    Bool(bool),
    /// A number.
    Int(i64),
    /// A text.
    Text(String),
}

/// A whole bundle of everything at once (a large schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Kitchen {
    /// Optional fields.
    pub options: OptionFields,
    /// An order.
    pub order: Order,
    /// A shape.
    pub shape: Shape,
    /// An event.
    pub event: Event,
    /// A message.
    pub message: Message,
    /// An amount.
    pub amount: Amount,
    /// Ranges.
    pub ranges: IntegerRanges,
}

/// A key-value pair list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Labels {
    /// Label pairs.
    #[schemars(length(max = 64))]
    pub labels: Vec<Label>,
}

/// A label.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Label {
    /// The key.
    #[schemars(length(min = 1, max = 63), regex(pattern = r"^[a-z][a-z0-9_.-]*$"))]
    pub key: String,
    /// The value.
    #[schemars(length(max = 63))]
    pub value: String,
}

/// What every receipt-answering corpus capability returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    /// Whether the input was accepted.
    pub accepted: bool,
    /// The capability that answered.
    pub capability_id: String,
    /// The number of top-level members of the input.
    pub fields: u32,
}

// ---------------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------------

/// What a corpus capability answers: its input, as serde writes it back, or a [`Receipt`].
#[derive(Debug, Clone, Copy)]
enum Answer {
    Echo,
    Receipt,
}

macro_rules! corpus_table {
    ($( $id:literal : $ty:ty, $effect:ident, $answer:ident, $title:literal,
        [$($example:expr),+ $(,)?]; )*) => {
        /// The ids of every capability of the table, in order: those of [`corpus`] and of
        /// [`edge_corpus`].
        pub const ALL_IDS: &[&str] = &[$($id),*];

        fn corpus_capabilities() -> Result<Vec<CapabilityDefinition>, CorpusError> {
            Ok(vec![$(
                capability::<$ty>($id, Effect::$effect, Answer::$answer, $title, vec![$($example),+])?
            ),*])
        }

        /// The valid example inputs of a corpus capability (also its usage examples), the
        /// first one the most typical; empty for another id.
        #[must_use]
        pub fn example_inputs(capability_id: &str) -> Vec<Value> {
            match capability_id {
                $( $id => vec![$($example),+], )*
                _ => Vec::new(),
            }
        }

        /// `input` deserialized into the Rust input type of a corpus capability and serialized
        /// back (serde's canonical form), or serde's error; `None` for an id outside the
        /// corpus.
        #[must_use]
        pub fn reparse(capability_id: &str, input: &Value) -> Option<Result<Value, String>> {
            match capability_id {
                $( $id => Some(reparse_as::<$ty>(input)), )*
                _ => None,
            }
        }

        /// Whether two inputs of a corpus capability deserialize into equal Rust values
        /// (`PartialEq` of its input type: a set or map compares by content, whatever the
        /// order of the JSON); serde's error if either does not deserialize; `None` for an
        /// id outside the corpus.
        #[must_use]
        pub fn same_rust_value(
            capability_id: &str,
            a: &Value,
            b: &Value,
        ) -> Option<Result<bool, String>> {
            match capability_id {
                $( $id => Some(same_as::<$ty>(a, b)), )*
                _ => None,
            }
        }

        /// The output of a corpus capability for a valid input: the input as serde writes
        /// it back, or a [`Receipt`]; `None` for an id outside the corpus.
        #[must_use]
        pub fn handle(capability_id: &str, input: &Value) -> Option<Result<Value, String>> {
            match capability_id {
                $( $id => Some(answer::<$ty>(capability_id, Answer::$answer, input)), )*
                _ => None,
            }
        }
    };
}

/// A corpus type whose schema rcip refuses (a bug in the corpus).
#[derive(Debug)]
struct CorpusError {
    id: &'static str,
    error: SchemaGenerationError,
}

/// A valid input of a corpus capability (the first of [`example_inputs`]), or `None` for
/// another id.
#[must_use]
pub fn example_input(capability_id: &str) -> Option<Value> {
    example_inputs(capability_id).into_iter().next()
}

corpus_table! {
    "corpus.option_fields": OptionFields, Read, Echo, "Option fields",
        [json!({"name": "Ada", "nickname": null, "age": 36, "address": {"street": "1 Main St", "city": "London", "country": "GB"}, "color": null})];
    "corpus.skipped_options": SkippedOptions, Read, Echo, "Skipped options",
        [json!({"title": "Report", "rank": 3})];
    "corpus.default_fields": DefaultFields, Read, Echo, "Default fields",
        [json!({"query": "open invoices", "limit": 20, "include_archived": false, "tags": []})];
    "corpus.container_default": ContainerDefault, Read, Echo, "Container default",
        [json!({"ascending": true, "offset": 0, "label": "all"})];
    "corpus.unit_enum": UnitEnumField, Write, Echo, "Unit enum",
        [json!({"color": "dark_blue", "size": "MEDIUM", "others": ["red", "green"]})];
    "corpus.renamed_variants": RenamedVariants, Write, Receipt, "Renamed variants",
        [json!({"priority": "normal-priority"})];
    "corpus.external_enum": ExternalEnum, Write, Echo, "Externally tagged enum",
        [json!({"shape": {"rectangle": {"width": 2.5, "height": 4.0}}}),
         json!({"shape": "point"}), json!({"shape": {"square": 3.0}})];
    "corpus.internal_enum": InternalEnum, Write, Echo, "Internally tagged enum",
        [json!({"event": {"type": "key", "key": "a", "shift": true}}), json!({"event": {"type": "blur"}})];
    "corpus.adjacent_enum": AdjacentEnum, Write, Echo, "Adjacently tagged enum",
        [json!({"message": {"kind": "location", "body": {"lat": 51.5, "lon": -0.12}}}),
         json!({"message": {"kind": "empty"}}), json!({"message": {"kind": "count", "body": 3}})];
    "corpus.untagged_enum": UntaggedEnum, Write, Echo, "Untagged enum",
        [json!({"amount": {"cents": 1250, "currency": "EUR"}, "more": [100, "12.50"]})];
    "corpus.nested_structs": NestedStructs, Write, Receipt, "Nested structs",
        [json!({"order": {"customer": {"id": "67e55044-10b1-426f-9247-bb680e5fe0c8", "address": {"street": "1 Main St", "city": "Paris", "country": "FR"}}, "lines": [{"sku": "A-1", "quantity": 2}]}})];
    "corpus.string_map": StringMap, Write, Echo, "String-keyed map",
        [json!({"counts": {"apples": 3}})];
    "corpus.struct_map": StructMap, Write, Echo, "Map of structs",
        [json!({"addresses": {"home": {"street": "2 High St", "city": "Leeds", "country": "GB"}, "work": {"street": "3 Low Rd", "city": "York", "country": "GB"}}})];
    "corpus.nested_maps": NestedMaps, Read, Echo, "Nested maps",
        [json!({"scores": {"red": {"ann": 3, "bob": -1}}, "members": {"admins": ["ann"], "guests": []}})];
    "corpus.enum_keyed_map": EnumKeyedMap, Write, Echo, "Enum-keyed map",
        [json!({"stock": {"red": 4, "dark_blue": 0}})];
    "corpus.bounded_vectors": BoundedVectors, Write, Echo, "Bounded vectors",
        [json!({"labels": ["a", "bb"], "scores": [0, 100], "readings": [1.5, -2.25]})];
    "corpus.nested_vectors": NestedVectors, Write, Echo, "Nested vectors",
        [json!({"grid": [[1, 2], [3, -4]], "slots": ["x", null], "lines": [{"sku": "B-2", "quantity": 1}]})];
    "corpus.sets": Sets, Write, Echo, "Sets",
        [json!({"tags": ["urgent"], "ids": [1, 5, 9]})];
    "corpus.signed_integers": SignedIntegers, Write, Echo, "Signed integers",
        [json!({"a": -128, "b": 32767, "c": -2147483648i64, "d": 9007199254740993i64, "e": -9007199254740993i64})];
    "corpus.unsigned_integers": UnsignedIntegers, Write, Echo, "Unsigned integers",
        [json!({"a": 255, "b": 65535, "c": 4294967295u64, "d": 18446744073709551615u64, "e": 9007199254740993u64})];
    "corpus.wide_integers": WideIntegers, Write, Echo, "64-bit integers",
        [json!({"signed": i64::MIN, "unsigned": u64::MAX, "size": 0, "maybe": null})];
    "corpus.integer_ranges": IntegerRanges, Read, Echo, "Integer ranges",
        [json!({"rating": 10, "offset": -50, "page": 1})];
    "corpus.floats": Floats, Write, Echo, "Floats",
        [json!({"ratio": 0.5, "value": -1.0e-7, "probability": 1.0, "weight": null})];
    "corpus.uuid_fields": UuidFields, Write, Echo, "UUIDs",
        [json!({"id": "67e55044-10b1-426f-9247-bb680e5fe0c8", "parent": null, "related": ["00000000-0000-0000-0000-000000000000"]})];
    "corpus.date_times": DateTimes, Write, Echo, "Date-times",
        [json!({"starts_at": "2026-12-01T09:30:00Z", "ends_at": "2026-12-01T10:00:00.250Z"})];
    "corpus.dates": Dates, Read, Echo, "Dates",
        [json!({"from": "2026-12-01", "to": "2026-12-31", "holidays": ["2026-12-25"]})];
    "corpus.email_and_uri": EmailAndUri, Write, Echo, "E-mail and URI",
        [json!({"email": "ada@example.com", "homepage": "https://example.com/ada"})];
    "corpus.bounded_strings": BoundedStrings, Write, Echo, "Bounded strings",
        [json!({"title": "T", "body": "", "code": "ABC123"})];
    "corpus.pattern_strings": PatternStrings, Write, Echo, "Pattern strings",
        [json!({"slug": "hello-world-2", "color": "#a0B1c2", "version": "1.20.3"})];
    "corpus.newtypes": Newtypes, Write, Echo, "Newtypes",
        [json!({"payer": "user-7", "amount": 1999, "refund": null})];
    "corpus.boxed": Boxed, Write, Echo, "Boxed fields",
        [json!({"address": {"street": "4 Side St", "city": "Oslo", "country": "NO"}, "note": "fragile", "shape": {"circle": {"radius": 1.0}}})];
    "corpus.empty_input": EmptyInput, Read, Receipt, "Empty input",
        [json!({})];
    "corpus.unit_fields": UnitFields, Write, Echo, "Unit struct fields",
        [json!({"label": "tick", "marker": null})];
    "corpus.camel_case": CamelCase, Write, Echo, "camelCase fields",
        [json!({"firstName": "Grace", "lastName": "Hopper", "middleName": "Brewster", "dateOfBirth": "1906-12-09"})];
    "corpus.odd_keys": OddKeys, Write, Echo, "Keys with dashes and dots",
        [json!({"a-b": "x", "x.y": 7, "per cent/total": 12.5, "~home": false})];
    "corpus.kebab_case": KebabCase, Write, Echo, "kebab-case and SCREAMING_SNAKE_CASE",
        [json!({"max-retry-count": 3, "http-headers": {"CONTENT_TYPE": "text/plain", "ACCEPT_LANGUAGE": null}})];
    "corpus.flatten_struct": FlattenStruct, Read, Echo, "Flattened struct",
        [json!({"query": "rust", "page": 2, "per_page": 50})];
    "corpus.tuples": Tuples, Write, Echo, "Tuples",
        [json!({"pair": ["x", 1], "point": [0.0, 1.5, -2.0], "ranges": [[1, 5], [7, 9]]})];
    "corpus.tuple_structs": TupleStructs, Write, Echo, "Tuple structs",
        [json!({"color": [255, 128, 0], "palette": [[0, 0, 0]]})];
    "corpus.chars": Chars, Write, Echo, "Characters",
        [json!({"separator": ";", "quote": "\""})];
    "corpus.booleans": Booleans, Write, Echo, "Booleans",
        [json!({"enabled": true, "verified": null, "flags": [true, false]})];
    "corpus.single_field": SingleField, Read, Receipt, "Single field",
        [json!({"id": "abc"})];
    "corpus.many_fields": ManyFields, Write, Echo, "Many fields",
        [json!({"f01": "a", "f02": "b", "f03": 1, "f04": -1, "f05": true, "f06": false, "f07": 0.25, "f08": 2.0, "f09": null, "f10": "j", "f11": ["k"], "f12": "green"})];
    "corpus.many_optionals": ManyOptionals, Write, Receipt, "Many optional fields",
        [json!({"o01": "only this one"}), json!({})];
    "corpus.optional_composites": OptionalComposites, Write, Echo, "Optional composites",
        [json!({"event": {"type": "click", "x": 1, "y": 2}, "items": null, "meta": {"k": "v"}, "span": [3, 4]})];
    "corpus.documented": Documented, External, Receipt, "Documented input",
        [json!({"to": "user-1", "subject": "Hello"})];
    "corpus.send_notification": SendNotification, External, Receipt, "Send a notification",
        [json!({"to": ["ada@example.com"], "channel": "sms", "text": "Your order shipped.", "send_at": "2026-12-24T18:00:00Z"})];
    "corpus.delete_items": DeleteItems, Destructive, Receipt, "Delete items",
        [json!({"ids": ["67e55044-10b1-426f-9247-bb680e5fe0c8"], "reason": null, "permanent": true})];
    "corpus.search_filter": SearchFilter, Read, Echo, "Search filter",
        [json!({"all": [{"op": "eq", "field": "status", "value": "open"}, {"op": "between", "field": "price", "min": 1.0, "max": 9.5}, {"op": "exists", "field": "owner"}], "sort": {"field": "price", "direction": "desc"}})];
    "corpus.rich_enum": RichEnum, Write, Echo, "Enum variants with data",
        [json!({"payment": {"bankTransfer": {"iban": "DE89370400440532013000", "reference": null}}}),
         json!({"payment": {"split": [500, 1500]}}),
         json!({"payment": {"card": {"last4": "4242", "exp_month": 12}}})];
    "corpus.schedule": Schedule, Write, Echo, "Schedule",
        [json!({"firstAt": "2026-12-01T08:00:00Z", "repeat": {"every": "weekly", "days": [1, 3, 5]}, "skip": ["2026-12-25"]})];
    "corpus.settings": Settings, Write, Echo, "Settings",
        [json!({"values": {"dark_mode": {"type": "bool", "value": true}, "retries": {"type": "int", "value": 3}}})];
    "corpus.kitchen_sink": Kitchen, Write, Receipt, "Everything at once",
        [json!({
            "options": {"name": "Ada", "nickname": "A", "age": null, "address": null, "color": "red"},
            "order": {"customer": {"id": "67e55044-10b1-426f-9247-bb680e5fe0c8", "address": {"street": "1 Main St", "city": "Rome", "country": "IT"}}, "lines": [{"sku": "C-3", "quantity": 1000}]},
            "shape": {"square": 2.0},
            "event": {"type": "blur"},
            "message": {"kind": "text", "body": "hi"},
            "amount": "3.99",
            "ranges": {"rating": 1, "offset": 50, "page": 18446744073709551615u64}
        })];
    "corpus.labels": Labels, Destructive, Receipt, "Replace labels",
        [json!({"labels": [{"key": "team.backend", "value": "core"}]})];
    // The edge corpus (EDGE_IDS, `edge_corpus`): inputs that some profiles cannot express.
    "corpus.flatten_enum": FlattenEnum, Write, Echo, "Flattened tagged enum",
        [json!({"name": "share", "target_type": "user", "user_id": "u-1"}),
         json!({"name": "share", "target_type": "group", "group_id": "g-1", "recursive": false})];
    "corpus.root_tagged": RootTagged, Write, Receipt, "Tagged enum at the root",
        [json!({"action": "close", "document_id": "doc-1", "save": true}),
         json!({"action": "open", "document_id": "doc-2"})];
    "corpus.unit_struct_input": Marker, Read, Receipt, "Unit struct input",
        [json!(null)];
    "corpus.tuple_input": (String, u32), Write, Echo, "Tuple input",
        [json!(["a", 1])];
    "corpus.newtype_input": UserId, Read, Echo, "Newtype input",
        [json!("user-1")];
}

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

/// The ids of the edge corpus ([`edge_corpus`]), in order.
pub const EDGE_IDS: &[&str] = &[
    "corpus.flatten_enum",
    "corpus.root_tagged",
    "corpus.unit_struct_input",
    "corpus.tuple_input",
    "corpus.newtype_input",
];

/// The corpus capabilities, one per Rust input type, every input an object closed with
/// `additionalProperties: false`, as an application (at least 50: a test counts them): every
/// id of [`ALL_IDS`] but the [`EDGE_IDS`].
///
/// # Panics
///
/// If rcip refuses the schema of a corpus type: a bug in the corpus, which its tests catch.
#[must_use]
pub fn corpus() -> ApplicationDefinition {
    corpus_part(false)
}

/// The edge corpus: valid rcip capabilities whose inputs some agent tool schemas cannot take
/// as they are, for testing that a profile refuses them clearly (naming the capability and
/// the pointer) or transforms them. A flattened internally tagged enum (an object closed with
/// `unevaluatedProperties: false` over a `oneOf`), an internally tagged enum at the root (a
/// `oneOf` of objects, no root `type`), and inputs that are not objects: a unit struct
/// (`null`), a tuple and a newtype of a string.
///
/// # Panics
///
/// As [`corpus`].
#[must_use]
pub fn edge_corpus() -> ApplicationDefinition {
    corpus_part(true)
}

fn corpus_part(edge: bool) -> ApplicationDefinition {
    let capabilities = corpus_capabilities().unwrap_or_else(|CorpusError { id, error }| {
        panic!("the schema of corpus capability {id} is refused: {error}")
    });
    let mut definition = ApplicationDefinition::new(
        "corpus",
        "Agent corpus",
        "One capability per kind of Rust input type, for testing agent exports.",
    );
    definition.capabilities = capabilities
        .into_iter()
        .filter(|c| EDGE_IDS.contains(&c.id.as_str()) == edge)
        .collect();
    definition
}

/// The corpus, then every capability of the polls example (its own and its `polls`
/// relationship package's, read from `polls.catalog.json`), then the `hiring` relationship
/// package's, with the scopes they use.
///
/// # Panics
///
/// As [`corpus`], or if the committed polls catalog does not parse (a test of the examples
/// keeps it equal to the example's export).
#[must_use]
pub fn full_corpus() -> ApplicationDefinition {
    let mut definition = corpus();
    let polls = polls_definition()
        .unwrap_or_else(|error| panic!("examples/polls.catalog.json does not parse: {error}"));
    definition.scopes.extend(polls.scopes);
    definition.capabilities.extend(polls.capabilities);
    let hiring = &programs::hiring::PACKAGE;
    definition.scopes.push(ScopeDefinition::new(
        rcip_relationship::package_scope_id(hiring),
        "Hiring",
        hiring
            .description
            .as_deref()
            .unwrap_or("The hiring program's records."),
    ));
    definition
        .capabilities
        .extend(rcip_relationship::package_capabilities(hiring));
    definition
}

/// The polls example's definition, from its committed export.
pub fn polls_definition() -> Result<ApplicationDefinition, serde_json::Error> {
    let mut catalog: Value = serde_json::from_str(POLLS_CATALOG)?;
    if let Value::Object(map) = &mut catalog {
        // The export adds the content revision beside the definition's members.
        map.remove("revision");
    }
    serde_json::from_value(catalog)
}

fn capability<T: JsonSchema>(
    id: &'static str,
    effect: Effect,
    answer: Answer,
    title: &str,
    examples: Vec<Value>,
) -> Result<CapabilityDefinition, CorpusError> {
    let schema = |role| strict_schema_for::<T>(role).map_err(|error| CorpusError { id, error });
    let (output_schema, returns) = match answer {
        Answer::Echo => (schema(SchemaRole::Output)?, "Returns the input as stored."),
        Answer::Receipt => (
            strict_schema_for::<Receipt>(SchemaRole::Output)
                .map_err(|error| CorpusError { id, error })?,
            "Returns a receipt.",
        ),
    };
    let description = format!(
        "Corpus capability taking the Rust type `{}`. {returns}",
        T::schema_name()
    );
    let usage = examples.into_iter().enumerate().fold(
        UsageGuidance::new(format!(
            "When testing how an agent export handles: {title}."
        )),
        |usage, (n, example)| usage.example(format!("Valid input {}.", n + 1), example),
    );
    Ok(CapabilityDefinition::new(id, effect, title, description)
        .input_schema(schema(SchemaRole::Input)?)
        .output_schema(output_schema)
        .tag("corpus")
        .usage(usage))
}

fn reparse_as<T: Serialize + DeserializeOwned>(input: &Value) -> Result<Value, String> {
    let value: T = serde_json::from_value(input.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(&value).map_err(|e| e.to_string())
}

fn same_as<T: DeserializeOwned + PartialEq>(a: &Value, b: &Value) -> Result<bool, String> {
    let a: T = serde_json::from_value(a.clone()).map_err(|e| e.to_string())?;
    let b: T = serde_json::from_value(b.clone()).map_err(|e| e.to_string())?;
    Ok(a == b)
}

fn answer<T: Serialize + DeserializeOwned>(
    capability_id: &str,
    answer: Answer,
    input: &Value,
) -> Result<Value, String> {
    let echoed = reparse_as::<T>(input)?;
    match answer {
        Answer::Echo => Ok(echoed),
        Answer::Receipt => {
            let fields = input.as_object().map_or(0, serde_json::Map::len);
            serde_json::to_value(Receipt {
                accepted: true,
                capability_id: capability_id.to_owned(),
                fields: u32::try_from(fields).unwrap_or(u32::MAX),
            })
            .map_err(|e| e.to_string())
        }
    }
}
