/**
 * The Dev UI's icon (a skein of yarn: three strands), served at /favicon.svg and /favicon.ico so
 * a browser's automatic icon request never ends in a 404 console error.
 */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">
<rect width="32" height="32" rx="7" fill="#1f2a37"/>
<path d="M6 11c6-5 14-5 20 0M6 16c6-5 14-5 20 0M6 21c6-5 14-5 20 0" fill="none" stroke="#7aa7ff" stroke-width="2.5" stroke-linecap="round"/>
</svg>
`;
