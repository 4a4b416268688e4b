/** The agent console's HTML shell; `console.js` fills it in. */

function escapeAttr(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The page, with its assets under `base` (where the console is mounted, say `/simulator/agent`). */
export function consoleHtml(base: string): string {
  const b = escapeAttr(base);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Colloquy agent console</title>
<link rel="stylesheet" href="${b}/assets/console.css">
<script type="module" src="${b}/assets/console.js"></script>
</head>
<body>
<header class="toolbar">
  <div class="brand">Colloquy <span>agent console</span></div>
  <label>You are <input id="agent" placeholder="your agent name" aria-label="Agent name" maxlength="64"></label>
  <label>Token <input id="token" type="password" placeholder="COLLOQUY_AGENT_TOKEN" aria-label="Agent token" autocomplete="off"></label>
  <span id="presence">connecting&hellip;</span>
</header>
<main class="layout">
  <section class="panel" aria-label="Queue">
    <h2>Queue <span class="count" id="queue-count">0</span></h2>
    <ul id="queue"></ul>
  </section>
  <section class="panel" aria-label="Conversation">
    <div id="conversation" hidden>
      <div class="conv-head">
        <div class="title" id="conv-title"></div>
        <div class="sub" id="conv-sub"></div>
        <button type="button" id="claim">Claim</button>
        <input id="release-note" placeholder="note (optional)" aria-label="Release note" maxlength="2000">
        <button type="button" id="release">Release to the bot</button>
      </div>
      <div id="transcript" role="log" aria-live="polite"></div>
      <form class="reply" id="reply" autocomplete="off">
        <input id="reply-text" placeholder="Write to the customer" aria-label="Reply" maxlength="1600">
        <button type="submit" id="reply-send">Send</button>
      </form>
    </div>
    <div class="status" id="status" role="status"></div>
  </section>
</main>
</body>
</html>
`;
}
