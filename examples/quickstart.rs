use std::sync::{Arc, Mutex};

use rcip_runtime::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A task to add.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NewTask {
    /// What to do.
    title: String,
}

/// Which task.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TaskNumber {
    /// The task's number, as listed.
    number: u32,
}

/// A task on the list.
#[derive(Clone, Serialize, JsonSchema)]
struct Task {
    /// Its number, from 1.
    number: u32,
    /// What to do.
    title: String,
}

/// The application's state: one task list shared by every call.
#[derive(Default)]
struct TaskList(Mutex<Vec<Task>>);

// Each `#[capability]` method becomes a capability type in a module named after the type in
// snake case: `task_list::list`, `task_list::add`, `task_list::delete`.
#[capabilities]
impl TaskList {
    /// List the tasks.
    ///
    /// Every task on the list, oldest first.
    #[capability(effect = "read", scope = "tasks")] // id "tasks.list", checked at compile time
    fn list(&self) -> Vec<Task> {
        self.0.lock().expect("task list").clone()
    }

    /// Add a task.
    ///
    /// Adds a task at the end of the list and returns it with its number.
    #[capability(effect = "write", scope = "tasks")]
    fn add(&self, input: NewTask) -> Task {
        let mut tasks = self.0.lock().expect("task list");
        let number = tasks.last().map_or(1, |last| last.number + 1);
        tasks.push(Task {
            number,
            title: input.title,
        });
        tasks[tasks.len() - 1].clone()
    }

    /// Delete a task.
    ///
    /// Removes a task from the list for good.
    #[capability(effect = "destructive", scope = "tasks")]
    fn delete(&self, input: TaskNumber) -> Result<Task, HandlerError> {
        let mut tasks = self.0.lock().expect("task list");
        let index = tasks.iter().position(|task| task.number == input.number);
        let index = index.ok_or_else(|| {
            HandlerError::public("NO_SUCH_TASK", "no task has this number", vec![])
        })?;
        Ok(tasks.remove(index))
    }
}

catalog! {
    struct TodoApp {
        id = "todo",
        name = "Todo",
        description = "A shared task list.",
        scopes = [("tasks", "Tasks", "The task list.")],
        // Leave one out and the build fails, naming it.
        capabilities = [task_list::list, task_list::add, task_list::delete],
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Who may do what: reads and writes run; a destructive call runs once the human approves
    // it. (Without a policy, the default one denies writes: `POLICY_DENIED`.)
    let policy = policy_fn(|call| match call.capability().effect {
        Effect::Destructive if !call.confirmed() => {
            PolicyDecision::confirm("This cannot be undone.")
        }
        _ => PolicyDecision::Allow,
    });
    let tasks = Arc::new(TaskList::default());
    let runtime = TodoApp::runtime(RuntimeOptions::default().policy(policy), (tasks,))?;
    // An MCP server on stdin/stdout; the client asks the human to approve confirmations.
    rcip_mcp::serve_stdio(rcip_mcp::McpBridge::for_runtime(&runtime).build()?).await?;
    Ok(())
}
