// Boost.URL 1.81, compiled into the project from its headers (Debian ships its library in a
// package of its own; the headers come with libboost1.81-dev): once, here.
#include <boost/url/src.hpp>
