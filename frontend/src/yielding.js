// Ways for long work in the page to step aside, so that a key press waiting behind it is handled at once.

const channel = typeof MessageChannel === "function" ? new MessageChannel() : null;
const waitingForMessage = [];
if (channel) channel.port1.onmessage = () => waitingForMessage.shift()?.();

// A new task, without setTimeout's 4 ms clamp on nested timers.
function nextTask() {
  if (!channel) return new Promise((resolve) => setTimeout(resolve, 0));
  return new Promise((resolve) => {
    waitingForMessage.push(resolve);
    channel.port2.postMessage(null);
  });
}

// Gives the event loop a turn: input and rendering that are due go first.
export function yieldToEventLoop() {
  if (globalThis.scheduler?.yield) return globalThis.scheduler.yield();
  return nextTask();
}

// Resolves once the next frame has been rendered, so the layout and paint that the changes made so far need were
// done in that frame, and changes made afterwards fall into a later one.
export function afterNextFrame() {
  return new Promise((resolve) => requestAnimationFrame(() => nextTask().then(resolve)));
}
