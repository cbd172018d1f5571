// The README's app on the peer a user would pick instead, @mcp-b/global
// (WebMCP on document.modelContext, its own tab transport): the same two
// tools, for the size comparison. It has no confirmation list of its own.
import '@mcp-b/global';

const form = document.querySelector('form#signup');
const tools = [
  {
    name: 'signup_fill',
    description: 'Fill the sign-up form',
    inputSchema: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] },
    async execute({ email }) {
      form.elements.namedItem('email').value = email;
      return { content: [{ type: 'text', text: JSON.stringify({ filled: ['email'] }) }] };
    },
  },
  {
    name: 'signup_submit',
    description: 'Submit the sign-up form',
    inputSchema: { type: 'object', properties: {} },
    annotations: { destructiveHint: true },
    async execute() {
      form.requestSubmit();
      return { content: [{ type: 'text', text: JSON.stringify({ submitted: true }) }] };
    },
  },
];
Promise.all(tools.map((tool) => document.modelContext.registerTool(tool))).then(
  () => {
    document.querySelector('#result').textContent = tools.map((tool) => tool.name).join(' ');
    document.title = 'done';
  },
  (error) => console.error(error),
);
