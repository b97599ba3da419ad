//! The package, type, role, lifecycle, command and view rules.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::checker::{COUNT, Checker, child, declared_list, index, unknown_field};
use super::{MAX_EMITS, MAX_ROLE_PARTICIPANTS, MAX_STATES, RuleFields, RuleRoots, is_valid_name};
use crate::model::{
    Command, DataSchema, Emit, Kind, Lifecycle, Package, RELATIONSHIP_PROTOCOL, Role, Text,
    TypeDef, TypeRef, View, WORK_REQUESTED,
};
use crate::naming::{lower_camel, pascal_case};
use crate::operations::{FEED_OPERATION, TYPE_OPERATIONS};
use crate::problem::ProblemCode as Code;
use crate::schema::SchemaChecker;

impl Checker {
    pub(super) fn package(&mut self, value: &Value) -> Option<Package> {
        let root = self.object(value, "", "a package")?;
        self.keys(
            root,
            "",
            "a package",
            &[
                "protocol",
                "namespace",
                "version",
                "description",
                "types",
                "views",
            ],
            &["protocol", "namespace", "version", "types"],
        );
        if let Some(protocol) = root.get("protocol")
            && protocol.as_str() != Some(RELATIONSHIP_PROTOCOL)
        {
            self.report(
                "/protocol",
                Code::WrongProtocol,
                format!("expected \"{RELATIONSHIP_PROTOCOL}\", found {protocol}"),
            );
        }
        let namespace = root.get("namespace").and_then(|value| {
            let name = self.string(value, "/namespace", "a namespace")?;
            (self.name(name, "/namespace", "namespace")
                && self.mappable(name, "/namespace", "namespace"))
            .then_some(name)
        });
        let version = root.get("version").and_then(|value| match value.as_u64() {
            Some(version) if version > 0 => Some(version),
            _ => {
                self.report(
                    "/version",
                    Code::InvalidVersion,
                    format!("expected a positive integer, found {value}"),
                );
                None
            }
        });
        let description = self.description(root, "");
        let types = root
            .get("types")
            .and_then(|value| self.object(value, "/types", "the types"));
        if types.is_some_and(Map::is_empty) {
            self.report(
                "/types",
                Code::Empty,
                "a package declares at least one type",
            );
        }
        let declared: BTreeSet<&str> = types
            .map(|types| types.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let mut parsed: BTreeMap<&str, Option<TypeDef>> = BTreeMap::new();
        // Every valid type schema, also of types with other problems: views are checked
        // against it so that one pass reports their problems too.
        let mut schemas: BTreeMap<String, DataSchema> = BTreeMap::new();
        let mut camel: BTreeMap<String, &str> = BTreeMap::new();
        for (name, value) in types.into_iter().flatten() {
            if self.is_full() {
                break;
            }
            let at = child("/types", name);
            if self.name(name, &at, "type name") {
                self.id_form(&mut camel, name, &at, "type");
            }
            let type_def = self.type_def(name, value, &at, namespace, &declared, &mut schemas);
            parsed.insert(name, type_def);
        }
        let views = root
            .get("views")
            .and_then(|value| self.object(value, "/views", "the views"))
            .map(|views| {
                let mut camel = BTreeMap::new();
                views
                    .iter()
                    .filter_map(|(name, value)| {
                        // Past the problem limit nothing more is kept, nor worth finding.
                        if self.is_full() {
                            return None;
                        }
                        let at = child("/views", name);
                        // A view is a capability (`ns.view`): its name needs an id form.
                        if name == FEED_OPERATION {
                            self.report(
                                &at,
                                Code::ReservedName,
                                format!(
                                    "a view may not be called {name:?}: the package's change feed \
                                     is `{FEED_OPERATION}`"
                                ),
                            );
                        } else if is_valid_name(name) {
                            // (An invalid name is reported with the view.)
                            self.id_form(&mut camel, name, &at, "view");
                        }
                        self.view(name, value, &at, &declared, &schemas)
                    })
                    .collect::<Vec<_>>()
            });
        let types: Vec<TypeDef> = parsed.into_values().collect::<Option<_>>()?;
        Some(Package {
            namespace: Cow::Owned(namespace?.to_owned()),
            version: version?,
            description,
            types: Cow::Owned(types),
            views: Cow::Owned(views.unwrap_or_default()),
        })
    }

    /// Reports `name` when its generated form is already taken by an earlier name.
    /// A capability-id form for a valid name (its lower camel case), distinct from its
    /// siblings' forms in `taken`.
    fn id_form<'n>(
        &mut self,
        taken: &mut BTreeMap<String, &'n str>,
        name: &'n str,
        at: &str,
        what: &str,
    ) {
        if self.mappable(name, at, &format!("{what} name")) {
            self.collision(taken, lower_camel(name), name, at, what);
        }
    }

    pub(super) fn collision<'n>(
        &mut self,
        taken: &mut BTreeMap<String, &'n str>,
        form: Option<String>,
        name: &'n str,
        at: &str,
        what: &str,
    ) {
        let Some(form) = form else { return };
        if let Some(earlier) = taken.get(&form) {
            self.report(
                at,
                Code::NameCollision,
                format!("{what} {name:?} and {what} {earlier:?} both become `{form}`"),
            );
        } else {
            taken.insert(form, name);
        }
    }

    pub(super) fn type_def(
        &mut self,
        name: &str,
        value: &Value,
        at: &str,
        namespace: Option<&str>,
        declared: &BTreeSet<&str>,
        schemas: &mut BTreeMap<String, DataSchema>,
    ) -> Option<TypeDef> {
        let map = self.object(value, at, "a type")?;
        self.keys(
            map,
            at,
            "a type",
            &[
                "kind",
                "description",
                "schema",
                "roles",
                "lifecycle",
                "commands",
            ],
            &["kind", "schema"],
        );
        let kind = map.get("kind").and_then(|kind| match kind.as_str() {
            Some("entity") => Some(Kind::Entity),
            Some("relationship") => Some(Kind::Relationship),
            _ => {
                self.report(
                    &child(at, "kind"),
                    Code::InvalidKind,
                    format!("expected \"entity\" or \"relationship\", found {kind}"),
                );
                None
            }
        });
        let description = self.description(map, at);
        let schema = map
            .get("schema")
            .and_then(|schema| self.root_schema(schema, &child(at, "schema"), "a type's schema"));
        if let Some(schema) = &schema {
            schemas.insert(name.to_owned(), schema.clone());
        }
        let roles = self.roles(map, at, kind, namespace, declared);
        let lifecycle = map
            .get("lifecycle")
            .and_then(|value| self.lifecycle(value, &child(at, "lifecycle")));
        let commands = map.get("commands").and_then(|value| {
            let commands_at = child(at, "commands");
            let commands = self.object(value, &commands_at, "the commands")?;
            let mut camel = BTreeMap::new();
            let mut parsed = Vec::with_capacity(commands.len());
            let mut complete = true;
            for (command, value) in commands {
                if self.is_full() {
                    complete = false;
                    break;
                }
                let command_at = child(&commands_at, command);
                if TYPE_OPERATIONS.contains(&command.as_str()) {
                    self.report(
                        &command_at,
                        Code::ReservedName,
                        format!(
                            "a command may not be called {command:?}: every type has a `{command}` \
                             capability (reserved: {})",
                            TYPE_OPERATIONS.join(", ")
                        ),
                    );
                } else if self.name(command, &command_at, "command name") {
                    self.id_form(&mut camel, command, &command_at, "command");
                }
                let lifecycle = map.get("lifecycle").map(|_| lifecycle.as_ref());
                match self.command(command, value, &command_at, schema.as_ref(), lifecycle) {
                    Some(command) => parsed.push(command),
                    None => complete = false,
                }
            }
            complete.then_some(parsed)
        });
        let commands = match map.get("commands") {
            Some(_) => commands?,
            None => Vec::new(),
        };
        if map.contains_key("lifecycle") && lifecycle.is_none() {
            return None;
        }
        Some(TypeDef {
            name: Cow::Owned(name.to_owned()),
            kind: kind?,
            description,
            schema: schema?,
            roles: Cow::Owned(roles?),
            lifecycle,
            commands: Cow::Owned(commands),
        })
    }

    pub(super) fn roles(
        &mut self,
        map: &Map<String, Value>,
        at: &str,
        kind: Option<Kind>,
        namespace: Option<&str>,
        declared: &BTreeSet<&str>,
    ) -> Option<Vec<Role>> {
        let roles_at = child(at, "roles");
        let Some(value) = map.get("roles") else {
            if kind == Some(Kind::Relationship) {
                self.report(
                    at,
                    Code::RolesRequired,
                    "a relationship declares at least one role in \"roles\"",
                );
            }
            return Some(Vec::new());
        };
        let roles = self.object(value, &roles_at, "the roles")?;
        match kind {
            Some(Kind::Entity) => {
                self.report(
                    &roles_at,
                    Code::RolesNotAllowed,
                    "an entity has no roles (only relationships do)",
                );
            }
            Some(Kind::Relationship) if roles.is_empty() => {
                self.report(
                    &roles_at,
                    Code::RolesRequired,
                    "a relationship declares at least one role",
                );
            }
            _ => {}
        }
        let mut parsed = Vec::with_capacity(roles.len());
        let mut complete = true;
        for (name, value) in roles {
            if self.is_full() {
                complete = false;
                break;
            }
            let role_at = child(&roles_at, name);
            let named = self.name(name, &role_at, "role name");
            match self.role(name, value, &role_at, namespace, declared) {
                Some(role) if named => parsed.push(role),
                _ => complete = false,
            }
        }
        complete.then_some(parsed)
    }

    pub(super) fn role(
        &mut self,
        name: &str,
        value: &Value,
        at: &str,
        namespace: Option<&str>,
        declared: &BTreeSet<&str>,
    ) -> Option<Role> {
        let map = self.object(value, at, "a role")?;
        self.keys(
            map,
            at,
            "a role",
            &["min", "max", "types"],
            &["min", "max", "types"],
        );
        // (Required keys: a missing one is reported with the role's keys.)
        let min = self
            .bound(map, at, "min", COUNT, Code::RoleBounds)
            .ok()
            .flatten();
        let max = self
            .bound(map, at, "max", COUNT, Code::RoleBounds)
            .ok()
            .flatten();
        if let (Some(min), Some(max)) = (min, max)
            && (max < min.max(1) || max > MAX_ROLE_PARTICIPANTS)
        {
            self.report(
                &child(at, "max"),
                Code::RoleBounds,
                format!(
                    "max {max} must be at least max(min, 1) = {} and at most {MAX_ROLE_PARTICIPANTS}",
                    min.max(1)
                ),
            );
        }
        let types_at = child(at, "types");
        let targets = map
            .get("types")
            .and_then(|value| self.array(value, &types_at, "the role's types"))
            .map(|items| {
                if items.is_empty() {
                    self.report(&types_at, Code::Empty, "a role allows at least one type");
                }
                let mut seen = BTreeSet::new();
                let mut targets = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let item_at = index(&types_at, i);
                    let Some(text) = self.string(item, &item_at, "a namespace/type target") else {
                        continue;
                    };
                    let Some(target) = self.target(text, &item_at, namespace, declared) else {
                        continue;
                    };
                    if seen.insert(text) {
                        targets.push(target);
                    } else {
                        self.report(
                            &item_at,
                            Code::Duplicate,
                            format!("{text:?} is listed twice"),
                        );
                    }
                }
                targets
            });
        let (min, max) = (min?, max?);
        if max < min.max(1) || max > MAX_ROLE_PARTICIPANTS {
            return None;
        }
        Some(Role {
            name: Cow::Owned(name.to_owned()),
            min: u32::try_from(min).ok()?,
            max: u32::try_from(max).ok()?,
            types: Cow::Owned(targets?),
        })
    }

    pub(super) fn target(
        &mut self,
        text: &str,
        at: &str,
        namespace: Option<&str>,
        declared: &BTreeSet<&str>,
    ) -> Option<TypeRef> {
        let parts = text.split_once('/');
        let Some((target_namespace, type_name)) =
            parts.filter(|(n, t)| is_valid_name(n) && is_valid_name(t))
        else {
            self.report(
                at,
                Code::InvalidTarget,
                format!("expected \"namespace/type\" (two names), found {text:?}"),
            );
            return None;
        };
        if Some(target_namespace) == namespace && !declared.contains(type_name) {
            self.report(
                at,
                Code::UnknownType,
                format!(
                    "type {type_name:?} is not declared in this package (declared: {})",
                    declared_list(declared.iter().copied())
                ),
            );
            return None;
        }
        Some(TypeRef {
            namespace: Cow::Owned(target_namespace.to_owned()),
            name: Cow::Owned(type_name.to_owned()),
        })
    }

    pub(super) fn lifecycle(&mut self, value: &Value, at: &str) -> Option<Lifecycle> {
        let map = self.object(value, at, "a lifecycle")?;
        self.keys(
            map,
            at,
            "a lifecycle",
            &["initial", "states"],
            &["initial", "states"],
        );
        let states_at = child(at, "states");
        let states = map
            .get("states")
            .and_then(|value| self.array(value, &states_at, "the states"))
            .and_then(|items| {
                if items.is_empty() {
                    self.report(
                        &states_at,
                        Code::Empty,
                        "a lifecycle declares at least one state",
                    );
                    return None; // `initial` cannot name a state of an empty list
                } else if items.len() > MAX_STATES {
                    self.report(
                        &states_at,
                        Code::TooMany,
                        format!("{} states; at most {MAX_STATES}", items.len()),
                    );
                }
                self.names(items, &states_at, "state")
            });
        let initial = map.get("initial").and_then(|value| {
            let initial_at = child(at, "initial");
            let initial = self.string(value, &initial_at, "the initial state")?;
            if let Some(states) = &states {
                self.known_state(initial, &initial_at, states)?;
            }
            Some(initial)
        });
        let states = states?;
        if states.is_empty() || states.len() > MAX_STATES {
            return None;
        }
        Some(Lifecycle {
            initial: Cow::Owned(initial?.to_owned()),
            states: Cow::Owned(states.into_iter().map(Cow::Owned).collect()),
        })
    }

    /// A list of unique valid names (states, `from`); Rust forms checked for states.
    pub(super) fn names(&mut self, items: &[Value], at: &str, what: &str) -> Option<Vec<String>> {
        let mut names = Vec::with_capacity(items.len());
        let mut seen = BTreeSet::new();
        let mut pascal = BTreeMap::new();
        let mut complete = true;
        for (i, item) in items.iter().enumerate() {
            let item_at = index(at, i);
            let Some(name) = self.string(item, &item_at, &format!("a {what} name")) else {
                complete = false;
                continue;
            };
            if !self.name(name, &item_at, &format!("{what} name")) {
                complete = false;
            } else if !seen.insert(name) {
                self.report(
                    &item_at,
                    Code::Duplicate,
                    format!("{what} {name:?} is listed twice"),
                );
                complete = false;
            } else {
                self.collision(&mut pascal, Some(pascal_case(name)), name, &item_at, what);
                names.push(name.to_owned());
            }
        }
        complete.then_some(names)
    }

    pub(super) fn known_state(&mut self, state: &str, at: &str, states: &[String]) -> Option<()> {
        if states.iter().any(|s| s == state) {
            return Some(());
        }
        self.report(
            at,
            Code::UnknownState,
            format!(
                "unknown state {state:?} (declared: {})",
                declared_list(states.iter().map(String::as_str))
            ),
        );
        None
    }

    /// `lifecycle`: `None` when the type has none, `Some(None)` when it has an invalid one.
    pub(super) fn command(
        &mut self,
        name: &str,
        value: &Value,
        at: &str,
        schema: Option<&DataSchema>,
        lifecycle: Option<Option<&Lifecycle>>,
    ) -> Option<Command> {
        let map = self.object(value, at, "a command")?;
        self.keys(
            map,
            at,
            "a command",
            &[
                "description",
                "input",
                "guard",
                "from",
                "to",
                "set_data",
                "emit",
            ],
            &["input"],
        );
        let description = self.description(map, at);
        let input = map
            .get("input")
            .and_then(|value| self.root_schema(value, &child(at, "input"), "a command's input"));
        let fields = RuleFields {
            roots: RuleRoots::COMMAND,
            data: schema,
            input: input.as_ref(),
        };
        let guard = map
            .get("guard")
            .map(|value| self.rule(value, &child(at, "guard"), 1, &fields));
        let states: Option<Vec<String>> = lifecycle
            .flatten()
            .map(|l| l.states.iter().map(ToString::to_string).collect());
        let from = map.get("from").and_then(|value| {
            let from_at = child(at, "from");
            let items = self.array(value, &from_at, "the states a command runs from")?;
            if lifecycle.is_none() {
                self.report(
                    &from_at,
                    Code::LifecycleRequired,
                    "\"from\" needs the type to have a lifecycle",
                );
                return None;
            }
            if items.is_empty() {
                self.report(
                    &from_at,
                    Code::Empty,
                    "\"from\" lists at least one state (leave it out for any state)",
                );
                return None;
            }
            let names = self.names(items, &from_at, "state")?;
            let states = states.as_ref()?;
            let mut known = true;
            for (i, name) in names.iter().enumerate() {
                known &= self
                    .known_state(name, &index(&from_at, i), states)
                    .is_some();
            }
            known.then_some(names)
        });
        let to = map.get("to").and_then(|value| {
            let to_at = child(at, "to");
            let name = self.string(value, &to_at, "a state")?;
            if lifecycle.is_none() {
                self.report(
                    &to_at,
                    Code::LifecycleRequired,
                    "\"to\" needs the type to have a lifecycle",
                );
                return None;
            }
            self.known_state(name, &to_at, states.as_ref()?)?;
            Some(name.to_owned())
        });
        let set_data = map.get("set_data").and_then(|value| {
            let set_at = child(at, "set_data");
            let fields_map = self.object(value, &set_at, "the fields to set")?;
            let mut parsed = Vec::with_capacity(fields_map.len());
            let mut complete = true;
            for (field, value) in fields_map {
                let field_at = child(&set_at, field);
                if let Some(schema) = schema
                    && !schema.declares(field)
                {
                    self.report(
                        &field_at,
                        Code::UnknownField,
                        unknown_field(field, schema, "the type's schema"),
                    );
                    complete = false;
                }
                match self.rule(value, &field_at, 1, &fields) {
                    Some(expr) => parsed.push((Cow::Owned(field.clone()), expr)),
                    None => complete = false,
                }
            }
            complete.then_some(parsed)
        });
        let emit = map
            .get("emit")
            .and_then(|value| self.emits(value, &child(at, "emit")));
        let guard = match guard {
            Some(guard) => Some(guard?),
            None => None,
        };
        let absent_or = |key: &str, parsed: bool| !map.contains_key(key) || parsed;
        if !(absent_or("from", from.is_some())
            && absent_or("to", to.is_some())
            && absent_or("set_data", set_data.is_some())
            && absent_or("emit", emit.is_some()))
        {
            return None;
        }
        Some(Command {
            name: Cow::Owned(name.to_owned()),
            description,
            input: input?,
            guard,
            from: Cow::Owned(
                from.unwrap_or_default()
                    .into_iter()
                    .map(Cow::Owned)
                    .collect(),
            ),
            to: to.map(Cow::Owned),
            set_data: Cow::Owned(set_data.unwrap_or_default()),
            emit: Cow::Owned(emit.unwrap_or_default()),
        })
    }

    pub(super) fn emits(&mut self, value: &Value, at: &str) -> Option<Vec<Emit>> {
        let items = self.array(value, at, "the emitted intents")?;
        if items.len() > MAX_EMITS {
            self.report(
                at,
                Code::TooMany,
                format!("{} emit entries; at most {MAX_EMITS}", items.len()),
            );
        }
        let mut emits = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let item_at = index(at, i);
            let Some(map) = self.object(item, &item_at, "an emit entry") else {
                continue;
            };
            self.keys(
                map,
                &item_at,
                "an emit entry",
                &["kind", "task"],
                &["kind", "task"],
            );
            let kind_ok = map.get("kind").is_some_and(|kind| {
                let ok = kind.as_str() == Some(WORK_REQUESTED);
                if !ok {
                    self.report(
                        &child(&item_at, "kind"),
                        Code::UnknownEmitKind,
                        format!("expected \"{WORK_REQUESTED}\", found {kind}"),
                    );
                }
                ok
            });
            let task = map.get("task").and_then(|task| {
                let task_at = child(&item_at, "task");
                let task = self.string(task, &task_at, "a task name")?;
                self.name(task, &task_at, "task name").then_some(task)
            });
            if let (true, Some(task)) = (kind_ok, task) {
                emits.push(Emit {
                    task: Cow::Owned(task.to_owned()),
                });
            }
        }
        (emits.len() == items.len() && items.len() <= MAX_EMITS).then_some(emits)
    }

    pub(super) fn view(
        &mut self,
        name: &str,
        value: &Value,
        at: &str,
        types: &BTreeSet<&str>,
        schemas: &BTreeMap<String, DataSchema>,
    ) -> Option<View> {
        let named = self.name(name, at, "view name");
        let map = self.object(value, at, "a view")?;
        self.keys(
            map,
            at,
            "a view",
            &["type", "where", "fields"],
            &["type", "fields"],
        );
        let type_at = child(at, "type");
        let type_name = map.get("type").and_then(|value| {
            let type_name = self.string(value, &type_at, "a type name")?;
            if !types.contains(type_name) {
                self.report(
                    &type_at,
                    Code::UnknownType,
                    format!(
                        "type {type_name:?} is not declared in this package (declared: {})",
                        declared_list(types.iter().copied())
                    ),
                );
                return None;
            }
            Some(type_name)
        });
        let schema = type_name.and_then(|t| schemas.get(t));
        let fields = RuleFields {
            roots: RuleRoots::VIEW,
            data: schema,
            input: None,
        };
        let filter = map
            .get("where")
            .map(|value| self.rule(value, &child(at, "where"), 1, &fields));
        let fields_at = child(at, "fields");
        let projected = map.get("fields").and_then(|value| {
            let items = self.array(value, &fields_at, "the projected fields")?;
            if items.is_empty() {
                self.report(
                    &fields_at,
                    Code::Empty,
                    "a view projects at least one field",
                );
                return None;
            }
            let mut names: Vec<Text> = Vec::with_capacity(items.len());
            let mut seen = BTreeSet::new();
            let mut complete = true;
            for (i, item) in items.iter().enumerate() {
                let item_at = index(&fields_at, i);
                let Some(field) = self.string(item, &item_at, "a field name") else {
                    complete = false;
                    continue;
                };
                if let Some(schema) = schema
                    && !schema.declares(field)
                {
                    self.report(
                        &item_at,
                        Code::UnknownField,
                        unknown_field(field, schema, "the type's schema"),
                    );
                    complete = false;
                } else if !seen.insert(field) {
                    self.report(
                        &item_at,
                        Code::Duplicate,
                        format!("field {field:?} is listed twice"),
                    );
                    complete = false;
                } else {
                    names.push(Cow::Owned(field.to_owned()));
                }
            }
            complete.then_some(names)
        });
        let filter = match filter {
            Some(filter) => Some(filter?),
            None => None,
        };
        if !named || schema.is_none() {
            return None;
        }
        Some(View {
            name: Cow::Owned(name.to_owned()),
            type_name: Cow::Owned(type_name?.to_owned()),
            filter,
            fields: Cow::Owned(projected?),
        })
    }

    /// A type's schema or a command's input: an object schema of the subset.
    pub(super) fn root_schema(
        &mut self,
        value: &Value,
        at: &str,
        what: &str,
    ) -> Option<DataSchema> {
        let normalized = SchemaChecker::new(self).check(value, at)?;
        let Value::Object(map) = &normalized else {
            return None;
        };
        if map.get("type").and_then(Value::as_str) != Some("object") {
            self.report(
                at,
                Code::SchemaNotObject,
                format!("{what} must be an object schema (\"type\": \"object\")"),
            );
            return None;
        }
        let mut properties = map
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| {
                p.keys()
                    .map(|k| Cow::Owned(k.clone()))
                    .collect::<Vec<Text>>()
            })
            .unwrap_or_default();
        properties.sort(); // `DataSchema::declares` searches them

        Some(DataSchema {
            json: Cow::Owned(normalized.to_string()),
            properties: Cow::Owned(properties),
        })
    }
}
