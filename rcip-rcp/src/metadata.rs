//! The value shapes of the 17 core capabilities (spec §6, §6.1; schema `Capabilities`).
//!
//! Every known member is an `Option`: the schema requires none of them, and an absent member
//! means "not said". A member whose value does not fit its shape (a string where an integer
//! belongs, `0` where the minimum is 1, a value outside an enum) is treated as absent and
//! reported as a [`CapabilityProblem`]: the capability itself stays present, because presence
//! alone means supported. Members this version does not know go to `extra`, kept for the
//! round trip and never read.

use std::collections::BTreeMap;
use std::fmt;
use std::num::NonZeroU64;

use serde::de::DeserializeOwned;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

/// Something in an advertisement that rcip could not read: the value at `pointer` does not
/// fit its shape and is treated as absent. Never fatal.
#[derive(Debug, Clone, PartialEq)]
pub struct CapabilityProblem {
    /// JSON Pointer of the value, from the capabilities object (`/retrieve/maxK`).
    pub pointer: String,
    /// What the value should have been (`an integer >= 1`).
    pub expected: &'static str,
    /// The value as it came.
    pub value: Value,
}

impl fmt::Display for CapabilityProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: expected {}; the value is ignored",
            self.pointer, self.expected
        )
    }
}

/// Decoding with problems collected instead of failing.
pub(crate) trait Decode: Sized {
    /// Reads `value` (the member at `pointer`); never fails.
    fn decode(value: Value, pointer: &str, problems: &mut Vec<CapabilityProblem>) -> Self;
}

/// The members of `value`, or none (and a problem) when it is not an object.
fn into_object(
    value: Value,
    pointer: &str,
    problems: &mut Vec<CapabilityProblem>,
) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => {
            problems.push(CapabilityProblem {
                pointer: pointer.to_owned(),
                expected: "an object",
                value: other,
            });
            Map::new()
        }
    }
}

/// Takes the member `wire` out of `map` and reads it; `null` is absent, a misfit is absent
/// plus a problem.
fn take<T: Member>(
    map: &mut Map<String, Value>,
    wire: &str,
    expected: &'static str,
    pointer: &str,
    problems: &mut Vec<CapabilityProblem>,
) -> Option<T> {
    let value = map.remove(wire)?;
    if value.is_null() {
        return None;
    }
    let read = T::read(&value);
    if read.is_none() {
        problems.push(CapabilityProblem {
            pointer: format!("{pointer}/{wire}"),
            expected,
            value,
        });
    }
    read
}

/// A type a known member can have, read from JSON by the schema's rules.
trait Member: Sized {
    /// The value, or `None` when it does not fit.
    fn read(value: &Value) -> Option<Self>;
}

/// Reads through serde.
fn read_serde<T: DeserializeOwned>(value: &Value) -> Option<T> {
    T::deserialize(value).ok()
}

/// A JSON Schema `integer` ≥ 0, as RCP reads metadata: any number with a zero fractional
/// part (`200.0` is an integer to the schema), up to `u64::MAX`, or up to 2^53 when written
/// as a float.
///
/// ```
/// use rcip_rcp::read_integer;
/// use serde_json::json;
/// assert_eq!(read_integer(&json!(16.0)), Some(16));
/// assert_eq!(read_integer(&json!(1.5)), None);
/// assert_eq!(read_integer(&json!(-1)), None);
/// ```
#[must_use]
pub fn read_integer(value: &Value) -> Option<u64> {
    let number = value.as_number()?;
    if let Some(n) = number.as_u64() {
        return Some(n);
    }
    let f = number.as_f64()?;
    // 2^53: the largest range in which every integer has an exact f64.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    (f.fract() == 0.0 && (0.0..=EXACT).contains(&f)).then_some(f as u64)
}

impl Member for u64 {
    fn read(value: &Value) -> Option<Self> {
        read_integer(value)
    }
}

impl Member for NonZeroU64 {
    fn read(value: &Value) -> Option<Self> {
        read_integer(value).and_then(NonZeroU64::new)
    }
}

impl Member for bool {
    fn read(value: &Value) -> Option<Self> {
        value.as_bool()
    }
}

impl Member for String {
    fn read(value: &Value) -> Option<Self> {
        value.as_str().map(str::to_owned)
    }
}

impl Member for Number {
    fn read(value: &Value) -> Option<Self> {
        value.as_number().cloned()
    }
}

impl Member for Vec<String> {
    fn read(value: &Value) -> Option<Self> {
        read_serde(value)
    }
}

impl Member for FilterFields {
    /// By hand, on the value's own type: serde's untagged enums first buffer the whole
    /// value, recursively, and a value built in memory may nest deeper than any stack.
    fn read(value: &Value) -> Option<Self> {
        match value {
            Value::Array(_) => read_serde(value).map(FilterFields::Names),
            Value::Object(_) => read_serde(value).map(FilterFields::Typed),
            _ => None,
        }
    }
}

/// Declares a closed set of lower-case wire strings.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $wire:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $wire)] $variant, )+
        }

        impl $name {
            /// Every value, in the spec's order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The wire string.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $wire, )+
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Member for $name {
            fn read(value: &Value) -> Option<Self> {
                read_serde(value)
            }
        }

        impl Member for Vec<$name> {
            fn read(value: &Value) -> Option<Self> {
                read_serde(value)
            }
        }
    };
}

/// Declares a capability value: known members typed and optional, unknown members in
/// `extra`; lenient decoding; serialization that writes known members, then `extra`.
macro_rules! metadata {
    (
        $(#[$meta:meta])*
        $name:ident {
            $(
                $(#[$fmeta:meta])*
                $field:ident: $ty:ty = ($wire:literal, $expected:literal),
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: Option<$ty>, )*
            /// Members this version does not know (vendor `x-` members, a later revision's
            /// members): kept for the round trip, never read. A known member's name here is
            /// not written out.
            pub extra: Map<String, Value>,
        }

        impl $name {
            /// The wire names of the known members.
            pub const FIELDS: &'static [&'static str] = &[$($wire),*];
        }

        impl Decode for $name {
            #[allow(unused_variables, unused_mut)]
            fn decode(value: Value, pointer: &str, problems: &mut Vec<CapabilityProblem>) -> Self {
                let mut map = into_object(value, pointer, problems);
                $name {
                    $( $field: take(&mut map, $wire, $expected, pointer, problems), )*
                    extra: map,
                }
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(None)?;
                $(
                    if let Some(value) = &self.$field {
                        map.serialize_entry($wire, value)?;
                    }
                )*
                for (key, value) in &self.extra {
                    if !Self::FIELDS.contains(&key.as_str()) {
                        map.serialize_entry(key, value)?;
                    }
                }
                map.end()
            }
        }

        impl<'de> Deserialize<'de> for $name {
            /// Lenient: never fails on a misfit member (it is dropped); see
            /// [`Capabilities::decode`](super::Capabilities::decode) to see what was dropped.
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = Value::deserialize(deserializer)?;
                Ok(<$name as Decode>::decode(value, "", &mut Vec::new()))
            }
        }
    };
}

wire_enum! {
    /// A content modality (`embed.modalities`, `multiVector.modalities`,
    /// `retrieve.modalities`).
    Modality {
        /// `text`
        Text = "text",
        /// `image`
        Image = "image",
        /// `audio`
        Audio = "audio",
        /// `code`
        Code = "code",
        /// `multimodal`
        Multimodal = "multimodal",
    }
}

wire_enum! {
    /// How dense vectors are carried (`embed.encodings`; schema `VectorEncoding`). `json` is
    /// always supported.
    VectorEncoding {
        /// `json`: an array of numbers.
        Json = "json",
        /// `f32-base64`: little-endian binary32, concatenated, base64.
        F32Base64 = "f32-base64",
    }
}

wire_enum! {
    /// `multiVector.similarity`.
    Similarity {
        /// `dot`
        Dot = "dot",
        /// `cosine`
        Cosine = "cosine",
    }
}

wire_enum! {
    /// A rerank method (`rerank.methods`).
    RerankMethod {
        /// `cross-encoder`
        CrossEncoder = "cross-encoder",
        /// `colbert`
        Colbert = "colbert",
        /// `llm`
        Llm = "llm",
    }
}

wire_enum! {
    /// A retrieval mode (`retrieve.modes`, `retrieve.defaultMode`).
    RetrievalMode {
        /// `dense`
        Dense = "dense",
        /// `sparse`
        Sparse = "sparse",
        /// `hybrid`
        Hybrid = "hybrid",
    }
}

wire_enum! {
    /// A fusion method for `mode: "hybrid"` (`retrieve.fusion`).
    FusionMethod {
        /// `rrf`: reciprocal rank fusion.
        Rrf = "rrf",
        /// `weighted`: min-max weighted.
        Weighted = "weighted",
        /// `convex`: needs `scoreFloor` from every engine.
        Convex = "convex",
    }
}

wire_enum! {
    /// A returnable granularity (`retrieve.units`).
    RetrievalUnit {
        /// `chunk`
        Chunk = "chunk",
        /// `passage`
        Passage = "passage",
        /// `document`
        Document = "document",
        /// `node`
        Node = "node",
        /// `triplet`
        Triplet = "triplet",
        /// `path`
        Path = "path",
        /// `subgraph`
        Subgraph = "subgraph",
        /// `community`
        Community = "community",
        /// `tree-node`
        TreeNode = "tree-node",
        /// `page`
        Page = "page",
    }
}

wire_enum! {
    /// The scale of `Hit.score` (`retrieve.scoreScale`). Informational only: it does not make
    /// scores of different servers comparable.
    ScoreScale {
        /// `cosine`
        Cosine = "cosine",
        /// `dot`
        Dot = "dot",
        /// `bm25`
        Bm25 = "bm25",
        /// `probability`: already in [0, 1].
        Probability = "probability",
        /// `unbounded`: engine-relative.
        Unbounded = "unbounded",
    }
}

wire_enum! {
    /// A query transform (`transform.methods`).
    TransformMethod {
        /// `rewrite`
        Rewrite = "rewrite",
        /// `hyde`
        Hyde = "hyde",
        /// `multi-query`
        MultiQuery = "multi-query",
        /// `decompose`
        Decompose = "decompose",
        /// `step-back`
        StepBack = "step-back",
    }
}

wire_enum! {
    /// A memory scope (`memory.scopes`).
    MemoryScope {
        /// `global`
        Global = "global",
        /// `session`
        Session = "session",
    }
}

metadata! {
    /// `embed`: dense content to vector.
    EmbedCapability {
        /// `dimension` (integer ≥ 1).
        dimension: NonZeroU64 = ("dimension", "an integer >= 1"),
        /// `identity`: the model identity.
        identity: String = ("identity", "a string"),
        /// `batchLimit` (integer ≥ 1).
        batch_limit: NonZeroU64 = ("batchLimit", "an integer >= 1"),
        /// `normalized`.
        normalized: bool = ("normalized", "a boolean"),
        /// `modalities`.
        modalities: Vec<Modality> = ("modalities", "an array of modalities"),
        /// `encodings` (spec §7.3.1; not listed in the schema's `Capabilities`, which
        /// allows it as an additional member).
        encodings: Vec<VectorEncoding> = ("encodings", "an array of vector encodings"),
    }
}

metadata! {
    /// `sparseEmbed`: learned-sparse term weights.
    SparseEmbedCapability {
        /// `identity`.
        identity: String = ("identity", "a string"),
        /// `vocabulary` (integer ≥ 1).
        vocabulary: NonZeroU64 = ("vocabulary", "an integer >= 1"),
    }
}

metadata! {
    /// `multiVector`: multi-vector / late-interaction embeddings.
    MultiVectorCapability {
        /// `dimension` (integer ≥ 1).
        dimension: NonZeroU64 = ("dimension", "an integer >= 1"),
        /// `identity`.
        identity: String = ("identity", "a string"),
        /// `similarity`.
        similarity: Similarity = ("similarity", "\"dot\" or \"cosine\""),
        /// `modalities`.
        modalities: Vec<Modality> = ("modalities", "an array of modalities"),
    }
}

metadata! {
    /// `rerank`.
    RerankCapability {
        /// `methods`.
        methods: Vec<RerankMethod> = ("methods", "an array of rerank methods"),
        /// `maxCandidates` (integer ≥ 1).
        max_candidates: NonZeroU64 = ("maxCandidates", "an integer >= 1"),
        /// `models`.
        models: Vec<String> = ("models", "an array of strings"),
    }
}

metadata! {
    /// `retrieve`: full query-to-hits retrieval, with every member of spec §6.1 and the
    /// schema.
    ///
    /// ```
    /// use std::num::NonZeroU64;
    /// use rcip_rcp::{FusionMethod, RetrievalMode, RetrieveCapability, ScoreScale};
    ///
    /// let retrieve = RetrieveCapability {
    ///     max_k: NonZeroU64::new(200),
    ///     modes: Some(vec![RetrievalMode::Dense, RetrievalMode::Sparse, RetrievalMode::Hybrid]),
    ///     fusion: Some(vec![FusionMethod::Rrf]),
    ///     score_scale: Some(ScoreScale::Cosine),
    ///     default_mode: Some(RetrievalMode::Hybrid),
    ///     ..RetrieveCapability::default()
    /// };
    /// assert_eq!(
    ///     serde_json::to_value(&retrieve).unwrap(),
    ///     serde_json::json!({
    ///         "maxK": 200,
    ///         "modes": ["dense", "sparse", "hybrid"],
    ///         "defaultMode": "hybrid",
    ///         "fusion": ["rrf"],
    ///         "scoreScale": "cosine"
    ///     })
    /// );
    /// ```
    RetrieveCapability {
        /// `maxK` (integer ≥ 1): a hard cap; a larger `k` is clamped, not rejected.
        max_k: NonZeroU64 = ("maxK", "an integer >= 1"),
        /// `modes`: the supported retrieval modes.
        modes: Vec<RetrievalMode> = ("modes", "an array of retrieval modes"),
        /// `defaultMode`: the mode of a request that names none.
        default_mode: RetrievalMode = ("defaultMode", "a retrieval mode"),
        /// `modalities`: absent means `["text"]`.
        modalities: Vec<Modality> = ("modalities", "an array of modalities"),
        /// `fusion`: fusion methods for `mode: "hybrid"`.
        fusion: Vec<FusionMethod> = ("fusion", "an array of fusion methods"),
        /// `mmr`: MMR diversification can be requested inline.
        mmr: bool = ("mmr", "a boolean"),
        /// `rerankBuiltin`: `retrieve.rerank` works inside retrieve.
        rerank_builtin: bool = ("rerankBuiltin", "a boolean"),
        /// `deterministic`: the `seed` parameter is honoured.
        deterministic: bool = ("deterministic", "a boolean"),
        /// `snapshots`: `indexVersion` can pin a snapshot.
        snapshots: bool = ("snapshots", "a boolean"),
        /// `units`: returnable granularities; absent means chunk/passage only.
        units: Vec<RetrievalUnit> = ("units", "an array of retrieval units"),
        /// `levels` (integer ≥ 1): hierarchy levels; absent means a flat index.
        levels: NonZeroU64 = ("levels", "an integer >= 1"),
        /// `tokenBudget`: `tokenBudget` packing is honoured.
        token_budget: bool = ("tokenBudget", "a boolean"),
        /// `confidence`: hits carry a normalised `confidence` in [0, 1].
        confidence: bool = ("confidence", "a boolean"),
        /// `scoreScale`: informational only.
        score_scale: ScoreScale = ("scoreScale", "a score scale"),
        /// `scoreFloor`: the theoretical minimum score (enables `convex` fusion); there is
        /// deliberately no ceiling. A JSON number: always finite, kept as written.
        score_floor: Number = ("scoreFloor", "a number"),
    }
}

metadata! {
    /// `transform`: query transforms.
    TransformCapability {
        /// `methods`.
        methods: Vec<TransformMethod> = ("methods", "an array of transform methods"),
    }
}

metadata! {
    /// `graph`: graph retrieval.
    GraphCapability {
        /// `ops`: the spec lists `local`, `global`, `drift`, `communities`, `neighbors`; the
        /// schema allows any string.
        ops: Vec<String> = ("ops", "an array of strings"),
    }
}

metadata! {
    /// `index`: document add and delete.
    IndexCapability {
        /// `writable`: `index/add` needs `true`.
        writable: bool = ("writable", "a boolean"),
        /// `chunking`: server-side chunking.
        chunking: bool = ("chunking", "a boolean"),
        /// `contextual`: contextual chunk headers.
        contextual: bool = ("contextual", "a boolean"),
    }
}

impl IndexCapability {
    /// Whether `index/add` may be called: `writable` is `true` (absent is not writable).
    #[must_use]
    pub fn is_writable(&self) -> bool {
        self.writable == Some(true)
    }
}

metadata! {
    /// `session`: trajectory-scoped state through `sessionId`.
    SessionCapability {
        /// `dedup`.
        dedup: bool = ("dedup", "a boolean"),
        /// `ttlSeconds` (integer ≥ 0).
        ttl_seconds: u64 = ("ttlSeconds", "an integer >= 0"),
    }
}

metadata! {
    /// A capability whose value carries no defined members: `feedback`, `streaming`,
    /// `pagination`, and the object form of `citations`.
    MarkerCapability {}
}

metadata! {
    /// `memory`: memory build and clue recall.
    MemoryCapability {
        /// `scopes`.
        scopes: Vec<MemoryScope> = ("scopes", "an array of memory scopes"),
        /// `clues`.
        clues: bool = ("clues", "a boolean"),
    }
}

/// `filter.fields`: the filterable fields, as names or as name-to-type pairs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FilterFields {
    /// `["lang", "year"]`.
    Names(Vec<String>),
    /// `{"lang": "keyword", "year": "int"}`; the spec's types are `keyword`, `text`, `int`,
    /// `float`, `bool`, `date`, `geo`, the schema allows any string.
    Typed(BTreeMap<String, String>),
}

metadata! {
    /// `filter`: metadata filtering on `retrieve`.
    FilterCapability {
        /// `fields`.
        fields: FilterFields = ("fields", "an array of strings or an object of strings"),
        /// `operators`: the spec's are `eq`, `ne`, `gt`, `gte`, `lt`, `lte`, `in`, `nin`,
        /// `contains`, `exists`.
        operators: Vec<String> = ("operators", "an array of strings"),
    }
}

metadata! {
    /// `log`: log notifications.
    LogCapability {
        /// `levels`.
        levels: Vec<String> = ("levels", "an array of strings"),
    }
}

metadata! {
    /// `catalog`: the server is an aggregator of downstream engines.
    CatalogCapability {
        /// `engines`: how many (spec table; the schema only requires an object).
        engines: u64 = ("engines", "an integer >= 0"),
    }
}

/// `citations`: hits carry `citation` and `trust`. The spec's table gives an object; the
/// schema also allows a boolean.
///
/// Like every value, `false` is metadata: `"citations": false` is **present**, and so
/// advertises citations, as in every reference SDK. To not advertise citations, leave the
/// key out.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum CitationsCapability {
    /// The boolean form.
    Flag(bool),
    /// The object form.
    Metadata(MarkerCapability),
}

impl Default for CitationsCapability {
    fn default() -> Self {
        CitationsCapability::Metadata(MarkerCapability::default())
    }
}

impl Decode for CitationsCapability {
    fn decode(value: Value, pointer: &str, problems: &mut Vec<CapabilityProblem>) -> Self {
        match value {
            Value::Bool(flag) => CitationsCapability::Flag(flag),
            Value::Object(map) => CitationsCapability::Metadata(MarkerCapability::decode(
                Value::Object(map),
                pointer,
                problems,
            )),
            other => {
                problems.push(CapabilityProblem {
                    pointer: pointer.to_owned(),
                    expected: "a boolean or an object",
                    value: other,
                });
                CitationsCapability::default()
            }
        }
    }
}

impl<'de> Deserialize<'de> for CitationsCapability {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(CitationsCapability::decode(value, "", &mut Vec::new()))
    }
}
