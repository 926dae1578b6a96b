/** A mistake the user of `npm run image` can fix: printed as one line, no stack. */
export class ImageError extends Error {}
