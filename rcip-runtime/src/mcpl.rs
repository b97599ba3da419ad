//! The MCPL 0.5 capability-path vocabulary, compiled from `vocabularies/mcpl-0.5.json` by
//! `rcip-build` (this crate's build script): [`CapabilityPath`] and the [`VOCABULARY`] tree the
//! advertisement walk uses. An application with an extended vocabulary compiles its own file
//! the same way (`rcip_build::VocabularyFile`) and includes it with
//! [`include_vocabulary!`](crate::include_vocabulary).
//!
//! ```
//! use rcip_runtime::mcpl::{CapabilityPath, VOCABULARY};
//! use serde_json::json;
//!
//! assert_eq!(CapabilityPath::ALL.len(), 17);
//! assert_eq!("channels.publish".parse(), Ok(CapabilityPath::ChannelsPublish));
//! let advertised = VOCABULARY.advertised(&json!({"channels": true, "tools": true}), None);
//! assert_eq!(advertised.len(), 7); // the channel leaves; `tools` only counts from outside
//! ```

include!(concat!(env!("OUT_DIR"), "/rcip_vocabulary_mcpl-0.5.rs"));
