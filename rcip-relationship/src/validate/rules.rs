//! Rule expressions: operators, arities, paths, constants and depth.

use std::borrow::Cow;

use serde_json::Value;

use super::checker::{Checker, child, index, unknown_field};
use super::{MAX_PATH_COMPONENTS, MAX_RULE_DEPTH, MAX_RULE_OPERANDS, RuleRoots};
use crate::model::DataSchema;
use crate::problem::ProblemCode as Code;
use crate::rule::{Comparison, Constant, Expr, Path, Root};

/// The fields a rule's paths may name, when known.
pub(super) struct RuleFields<'a> {
    pub(super) roots: RuleRoots,
    pub(super) data: Option<&'a DataSchema>,
    pub(super) input: Option<&'a DataSchema>,
}

impl Checker {
    pub(super) fn rule(
        &mut self,
        value: &Value,
        at: &str,
        depth: usize,
        fields: &RuleFields<'_>,
    ) -> Option<Expr> {
        if depth > MAX_RULE_DEPTH {
            self.report(
                at,
                Code::RuleTooDeep,
                format!("expressions nest at most {MAX_RULE_DEPTH} levels"),
            );
            return None;
        }
        let map = match value {
            Value::Object(map) => map,
            _ => return self.constant(value, at, depth).map(Expr::Const),
        };
        let mut operators = map.iter();
        let (Some((operator, operand)), None) = (operators.next(), operators.next()) else {
            self.report(
                at,
                Code::RuleOperator,
                format!(
                    "an expression has exactly one operator key, found {}{}",
                    map.len(),
                    if map.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " ({})",
                            map.keys()
                                .map(String::as_str)
                                .collect::<Vec<_>>()
                                .join(", ")
                        )
                    }
                ),
            );
            return None;
        };
        let operand_at = child(at, operator);
        match operator.as_str() {
            "path" | "present" => {
                let text = self.string(operand, &operand_at, "a dotted path")?;
                let path = self.path(text, &operand_at, fields)?;
                Some(if operator == "path" {
                    Expr::Path(path)
                } else {
                    Expr::Present(path)
                })
            }
            "all" | "any" => {
                let items = self.array(operand, &operand_at, "the operands")?;
                if items.is_empty() || items.len() > MAX_RULE_OPERANDS {
                    self.report(
                        &operand_at,
                        Code::RuleArity,
                        format!(
                            "{operator:?} takes 1 to {MAX_RULE_OPERANDS} expressions, found {}",
                            items.len()
                        ),
                    );
                    return None;
                }
                let operands = self.operands(items, &operand_at, depth, fields)?;
                Some(if operator == "all" {
                    Expr::All(Cow::Owned(operands))
                } else {
                    Expr::Any(Cow::Owned(operands))
                })
            }
            "not" => {
                let operand = self.rule(operand, &operand_at, depth + 1, fields)?;
                Some(Expr::Not(Cow::Owned(vec![operand])))
            }
            other => {
                let Some(comparison) = Comparison::ALL.into_iter().find(|c| c.as_str() == other)
                else {
                    self.report(
                        &operand_at,
                        Code::RuleOperator,
                        format!(
                            "unknown operator {other:?} (expected one of path, all, any, not, present, eq, ne, gt, gte, lt, lte)"
                        ),
                    );
                    return None;
                };
                let items = self.array(operand, &operand_at, "the two operands")?;
                if items.len() != 2 {
                    self.report(
                        &operand_at,
                        Code::RuleArity,
                        format!(
                            "{other:?} takes exactly two operands, found {}",
                            items.len()
                        ),
                    );
                    return None;
                }
                let operands = self.operands(items, &operand_at, depth, fields)?;
                Some(Expr::Compare(comparison, Cow::Owned(operands)))
            }
        }
    }

    pub(super) fn operands(
        &mut self,
        items: &[Value],
        at: &str,
        depth: usize,
        fields: &RuleFields<'_>,
    ) -> Option<Vec<Expr>> {
        let parsed: Vec<Option<Expr>> = items
            .iter()
            .enumerate()
            .map(|(i, item)| self.rule(item, &index(at, i), depth + 1, fields))
            .collect();
        parsed.into_iter().collect()
    }

    pub(super) fn constant(&mut self, value: &Value, at: &str, depth: usize) -> Option<Constant> {
        Some(match value {
            Value::Null => Constant::Null,
            Value::Bool(b) => Constant::Bool(*b),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Constant::Int(i)
                } else if let Some(u) = n.as_u64() {
                    Constant::UInt(u)
                } else {
                    Constant::Float(n.as_f64()?)
                }
            }
            Value::String(s) => Constant::Str(Cow::Owned(s.clone())),
            Value::Array(items) => {
                if depth > MAX_RULE_DEPTH {
                    self.report(
                        at,
                        Code::RuleTooDeep,
                        format!("expressions nest at most {MAX_RULE_DEPTH} levels"),
                    );
                    return None;
                }
                let parsed: Vec<Option<Constant>> = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| self.constant(item, &index(at, i), depth + 1))
                    .collect();
                Constant::Array(Cow::Owned(parsed.into_iter().collect::<Option<_>>()?))
            }
            Value::Object(_) => {
                self.report(
                    at,
                    Code::RuleObjectConstant,
                    "an object is never a constant (only scalars and arrays are)",
                );
                return None;
            }
        })
    }

    pub(super) fn path(&mut self, text: &str, at: &str, fields: &RuleFields<'_>) -> Option<Path> {
        let components: Vec<&str> = text.split('.').collect();
        let bad = |checker: &mut Self, why: String| {
            checker.report(at, Code::RulePath, format!("invalid path {text:?}: {why}"));
            None
        };
        if components.len() > MAX_PATH_COMPONENTS {
            return bad(
                self,
                format!(
                    "at most {MAX_PATH_COMPONENTS} components, found {}",
                    components.len()
                ),
            );
        }
        if components.iter().any(|c| c.is_empty()) {
            return bad(self, "empty component".to_owned());
        }
        let root = match components[0] {
            "data" => Root::Data,
            "input" => Root::Input,
            "state" => Root::State,
            other => {
                return bad(
                    self,
                    format!("starts with {other:?}; paths start with data, input or state"),
                );
            }
        };
        if root == Root::State && components.len() > 1 {
            return bad(
                self,
                "\"state\" is the lifecycle state and has no components".to_owned(),
            );
        }
        if !fields.roots.allows(root) {
            self.report(
                at,
                Code::RuleRoot,
                format!(
                    "{:?} paths are not available here (a view sees data and state)",
                    root.as_str()
                ),
            );
            return None;
        }
        let schema = match root {
            Root::Data => fields.data.map(|s| (s, "the type's schema")),
            Root::Input => fields.input.map(|s| (s, "the command's input schema")),
            Root::State => None,
        };
        if let (Some((schema, what)), Some(first)) = (schema, components.get(1))
            && !schema.declares(first)
        {
            self.report(at, Code::UnknownField, unknown_field(first, schema, what));
            return None;
        }
        Some(Path {
            root,
            segments: Cow::Owned(
                components[1..]
                    .iter()
                    .map(|c| Cow::Owned((*c).to_owned()))
                    .collect(),
            ),
        })
    }
}
