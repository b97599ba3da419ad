//! A `#[capabilities]` block's method left out of the catalog: one error, naming the
//! catalog, the method left out and what to write.
use rcip_runtime::{capabilities, catalog};

#[derive(Default)]
struct Tasks;

#[capabilities]
impl Tasks {
    /// List the tasks.
    #[capability(effect = "read", scope = "tasks")]
    fn list(&self) -> u32 {
        0
    }

    /// Add a task.
    #[capability(effect = "write", scope = "tasks")]
    fn add(&self) -> u32 {
        1
    }

    /// Delete a task.
    #[capability(effect = "destructive", scope = "tasks")]
    fn delete(&self) -> u32 {
        2
    }
}

catalog! {
    struct TodoApp {
        id = "todo", name = "Todo", description = "A task list.",
        scopes = [("tasks", "Tasks", "The task list.")],
        capabilities = [tasks::list, tasks::add],
    }
}

fn main() {}
