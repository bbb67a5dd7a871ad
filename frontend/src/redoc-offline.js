// Loaded on /api/redoc/ before Redoc itself. Redoc 2.x draws the Redocly logo in its side menu from the Redocly CDN
// and has no option to leave it out; this app loads nothing from other hosts. An image whose source is on another
// origin gets an empty source instead, which the browser never requests (Redoc then drops the logo as broken).
function isForeign(value) {
  try {
    const url = new URL(String(value), document.baseURI);
    return (url.protocol === "http:" || url.protocol === "https:") && url.origin !== window.location.origin;
  } catch {
    return false;
  }
}

const setAttribute = Element.prototype.setAttribute;
Element.prototype.setAttribute = function setAttributeKeepingImagesLocal(name, value) {
  const local = this instanceof HTMLImageElement && /^src(set)?$/i.test(name) && isForeign(value) ? "" : value;
  return setAttribute.call(this, name, local);
};

const imageSource = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, "src");
Object.defineProperty(HTMLImageElement.prototype, "src", {
  ...imageSource,
  set(value) {
    imageSource.set.call(this, isForeign(value) ? "" : value);
  },
});
