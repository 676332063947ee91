//! Hand-written wire form of sampling content, whose shape differs between revisions.
//!
//! Before 2025-11-25 a sampling message holds exactly one content block; from 2025-11-25 on it
//! may hold one or an array. Written for an older revision, a one-element array becomes the
//! single block, and a longer array is an error (it has no form there).

use serde::ser::Error as _;
use serde::{Serialize, Serializer};

use crate::wire::{ForRevision, WireSerialize};
use crate::{ProtocolVersion, Revisions, SamplingContent, SamplingMessageContentBlock};

impl WireSerialize for SamplingContent {
    fn wire_serialize<S: Serializer>(&self, revs: Revisions, s: S) -> Result<S::Ok, S::Error> {
        let arrays_allowed = revs.intersects(ProtocolVersion::V2025_11_25.and_newer());
        if let Some((kind, since)) = self.blocks().iter().find_map(|b| without_form(b, revs)) {
            // Written as the fields of the revision, such a block would be `{}`, which no
            // receiver reads (found by the fuzz target `types`).
            return Err(S::Error::custom(format_args!(
                "{kind} sampling content has no form before {}",
                since.as_str()
            )));
        }
        match self {
            SamplingContent::Text(v) => ForRevision::new(v, revs).serialize(s),
            SamplingContent::Image(v) => ForRevision::new(v, revs).serialize(s),
            SamplingContent::Audio(v) => ForRevision::new(v, revs).serialize(s),
            SamplingContent::ToolUse(v) => ForRevision::new(v, revs).serialize(s),
            SamplingContent::ToolResult(v) => ForRevision::new(v, revs).serialize(s),
            SamplingContent::Array(items) if arrays_allowed => ForRevision::new(items, revs).serialize(s),
            SamplingContent::Array(items) => match items.as_slice() {
                [one] => ForRevision::new(one, revs).serialize(s),
                _ => Err(S::Error::custom(format_args!(
                    "sampling content of {} blocks has no form before 2025-11-25 (one block only)",
                    items.len()
                ))),
            },
        }
    }
}

/// The kind of `block` and the revision it came in, when none of `revs` has it (audio came in
/// 2025-03-26, tool use and tool results in 2025-11-25).
fn without_form(block: &SamplingMessageContentBlock, revs: Revisions) -> Option<(&'static str, ProtocolVersion)> {
    let (kind, since) = match block {
        SamplingMessageContentBlock::Text(_) | SamplingMessageContentBlock::Image(_) => return None,
        SamplingMessageContentBlock::Audio(_) => ("audio", ProtocolVersion::V2025_03_26),
        SamplingMessageContentBlock::ToolUse(_) => ("tool_use", ProtocolVersion::V2025_11_25),
        SamplingMessageContentBlock::ToolResult(_) => ("tool_result", ProtocolVersion::V2025_11_25),
    };
    (!revs.intersects(since.and_newer())).then_some((kind, since))
}

impl SamplingContent {
    /// The content blocks, whichever form the message used.
    pub fn blocks(&self) -> Vec<SamplingMessageContentBlock> {
        match self {
            SamplingContent::Text(v) => vec![SamplingMessageContentBlock::Text(v.clone())],
            SamplingContent::Image(v) => vec![SamplingMessageContentBlock::Image(v.clone())],
            SamplingContent::Audio(v) => vec![SamplingMessageContentBlock::Audio(v.clone())],
            SamplingContent::ToolUse(v) => vec![SamplingMessageContentBlock::ToolUse(v.clone())],
            SamplingContent::ToolResult(v) => {
                vec![SamplingMessageContentBlock::ToolResult(v.clone())]
            }
            SamplingContent::Array(items) => items.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{TextContent, to_value_for};

    /// Found by the fuzz target `types` (fuzz/artifacts/types/): a tool result written for
    /// 2025-06-18 was `{}`, which does not decode as sampling content.
    #[test]
    fn blocks_a_revision_lacks_have_no_form_there() {
        let result = serde_json::json!({"type": "tool_result", "toolUseId": "c", "content": []});
        for content in [result.clone(), serde_json::json!([result])] {
            let c: SamplingContent = serde_json::from_value(content).unwrap();
            let err = to_value_for(&c, ProtocolVersion::V2025_06_18).unwrap_err().to_string();
            assert!(err.contains("tool_result sampling content has no form before 2025-11-25"), "{err}");
            assert!(to_value_for(&c, ProtocolVersion::V2025_11_25).is_ok());
        }
        let audio: SamplingContent =
            serde_json::from_value(serde_json::json!({"type": "audio", "data": "AA==", "mimeType": "audio/wav"}))
                .unwrap();
        assert!(to_value_for(&audio, ProtocolVersion::V2024_11_05).is_err());
        assert!(to_value_for(&audio, ProtocolVersion::V2025_03_26).is_ok());
    }

    #[test]
    fn one_element_array_is_a_single_block_for_old_revisions() {
        let c = SamplingContent::Array(vec![SamplingMessageContentBlock::Text(TextContent::new("hi"))]);
        let old = to_value_for(&c, ProtocolVersion::V2025_06_18).unwrap();
        assert_eq!(old, serde_json::json!({"type": "text", "text": "hi"}));
        let new = to_value_for(&c, ProtocolVersion::V2025_11_25).unwrap();
        assert_eq!(new, serde_json::json!([{"type": "text", "text": "hi"}]));
    }

    #[test]
    fn longer_arrays_have_no_old_form() {
        let t = SamplingMessageContentBlock::Text(TextContent::new("hi"));
        let c = SamplingContent::Array(vec![t.clone(), t]);
        let err = to_value_for(&c, ProtocolVersion::V2024_11_05).unwrap_err();
        assert!(err.to_string().contains("no form before 2025-11-25"), "{err}");
    }
}
